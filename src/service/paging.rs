//! Pages of a list ordered by (creation time, id): `pageSize` items after the item a
//! `pageToken` names, and the token of the next page. The token is `<createdAt>.<id>` of the
//! last item returned, or, for the lists that take opaque tokens, the same position as the
//! list's [`TokenScope`] writes it: keyset paging, so a page costs the same however deep it is,
//! and an item created meanwhile is neither skipped nor repeated.

use super::page_tokens::TokenScope;
use crate::error::{Error, FieldViolation, Result};

/// Items per page when the request names none.
pub const DEFAULT_PAGE_SIZE: i64 = 100;

/// Items per page at most (the descriptor also refuses more).
pub const MAX_PAGE_SIZE: i64 = 500;

/// A page asked for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Page {
    /// The (created at, id) the page starts after; `(i64::MIN, "")` for the first page.
    pub after: (i64, String),
    /// How many items it holds at most.
    pub size: i64,
}

impl Page {
    /// The page `page_size` and `page_token` ask for; a token that is not one this API gave is
    /// `INVALID_INPUT` naming `pageToken`.
    pub fn of(page_size: i32, page_token: &str) -> Result<Page> {
        let parsed = Page::parsed(page_size, page_token, DEFAULT_PAGE_SIZE, |token| {
            token
                .split_once('.')
                .and_then(|(at, id)| Some((at.parse::<i64>().ok()?, id.to_owned())))
                .filter(|(_, id)| !id.is_empty())
        });
        parsed.ok_or_else(|| {
            Error::fields(vec![FieldViolation::new(
                "pageToken",
                "is not a page token of this list; pass the nextPageToken of the previous page, or none",
            )])
        })
    }

    /// The page `page_size` (0: `default_size`) and the opaque `page_token` of `scope` ask for;
    /// a token `scope` did not make, or one changed since, is `INVALID_INPUT` naming `pageToken`.
    pub fn of_scoped(page_size: i32, page_token: &str, default_size: i64, scope: &TokenScope) -> Result<Page> {
        let parsed = Page::parsed(page_size, page_token, default_size, |token| scope.open(token));
        parsed.ok_or_else(|| {
            Error::fields(vec![FieldViolation::new(
                "pageToken",
                "is not a page token of this list with these filters; pass the nextPageToken of the previous \
                 page unchanged, with the same filters, or none for the first page",
            )])
        })
    }

    /// The page, or `None` when `read` does not make a position of the non-empty `page_token`.
    fn parsed(
        page_size: i32,
        page_token: &str,
        default_size: i64,
        read: impl FnOnce(&str) -> Option<(i64, String)>,
    ) -> Option<Page> {
        let size = match i64::from(page_size) {
            0 => default_size,
            size => size.clamp(1, MAX_PAGE_SIZE),
        };
        if page_token.is_empty() {
            return Some(Page { after: (i64::MIN, String::new()), size });
        }
        read(page_token).map(|after| Page { after, size })
    }

    /// How many rows to ask the store for: one more than the page, to know whether another follows.
    pub fn limit(&self) -> i64 {
        self.size + 1
    }

    /// The store's `after` argument.
    pub fn after(&self) -> (i64, &str) {
        (self.after.0, self.after.1.as_str())
    }

    /// The position the page starts after; `None` for the first page.
    pub fn resumes_after(&self) -> Option<(i64, &str)> {
        (!self.after.1.is_empty()).then(|| self.after())
    }

    /// Cuts `rows` (fetched with [`Page::limit`]) to the page and returns the next page's token,
    /// empty when this page is the last.
    pub fn finish<T>(&self, rows: &mut Vec<T>, key: impl Fn(&T) -> (i64, &str)) -> String {
        self.finish_with(rows, key, |at, id| format!("{at}.{id}"))
    }

    /// As [`Page::finish`], with the next page's token made by `scope`. Call it on the rows as
    /// read, before any is filtered out, so that the token passes every row read.
    pub fn finish_scoped<T>(&self, rows: &mut Vec<T>, key: impl Fn(&T) -> (i64, &str), scope: &TokenScope) -> String {
        self.finish_with(rows, key, |at, id| scope.token(at, id))
    }

    fn finish_with<T>(
        &self,
        rows: &mut Vec<T>,
        key: impl Fn(&T) -> (i64, &str),
        token: impl FnOnce(i64, &str) -> String,
    ) -> String {
        if rows.len() as i64 <= self.size {
            return String::new();
        }
        rows.truncate(self.size as usize);
        rows.last()
            .map(|last| {
                let (at, id) = key(last);
                token(at, id)
            })
            .unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_page_names_its_size_and_where_it_starts() {
        assert_eq!(Page::of(0, "").unwrap(), Page { after: (i64::MIN, String::new()), size: DEFAULT_PAGE_SIZE });
        assert_eq!(Page::of(9000, "").unwrap().size, MAX_PAGE_SIZE);
        let page = Page::of(2, "17.prn_x").unwrap();
        assert_eq!((page.after(), page.limit()), ((17, "prn_x"), 3));
        assert!(Page::of(2, "prn_x").is_err());
        assert!(Page::of(2, "x.prn_x").is_err());
    }

    #[test]
    fn the_next_token_is_the_last_item_of_a_full_page() {
        let page = Page::of(2, "").unwrap();
        let mut rows = vec![(1, "a"), (2, "b"), (3, "c")];
        assert_eq!(page.finish(&mut rows, |r| (r.0, r.1)), "2.b");
        assert_eq!(rows.len(), 2);
        let mut last = vec![(1, "a"), (2, "b")];
        assert_eq!(page.finish(&mut last, |r| (r.0, r.1)), "");
    }

    #[test]
    fn a_scoped_page_reads_back_its_own_tokens_only() {
        let key = crate::secrets::SecretKey::from_bytes(&[1; 32]).unwrap();
        let scope = TokenScope::of(&key, &["things.list", "acme"]);
        let first = Page::of_scoped(0, "", 500, &scope).unwrap();
        assert_eq!((first.size, first.resumes_after()), (500, None));
        let page = Page::of_scoped(2, "", 500, &scope).unwrap();
        let mut rows = vec![(1, "a"), (2, "b"), (3, "c")];
        let token = page.finish_scoped(&mut rows, |r| (r.0, r.1), &scope);
        let next = Page::of_scoped(2, &token, 500, &scope).unwrap();
        assert_eq!(next.resumes_after(), Some((2, "b")));

        let refused = |token: &str| Page::of_scoped(2, token, 500, &scope).unwrap_err().details["fields"].clone();
        assert_eq!(refused("2.b")[0]["field"], "pageToken");
        let elsewhere = TokenScope::of(&key, &["things.list", "globex"]);
        assert!(Page::of_scoped(2, &token, 500, &elsewhere).is_err());
    }
}

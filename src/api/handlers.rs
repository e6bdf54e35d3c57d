//! The handlers of every gRPC service, and the macro that writes the thin ones.
//!
//! One struct, [`Handlers`], implements each generated service trait, in the file of its
//! resource; the router wraps it in each generated server. Most methods are the same three
//! steps (the call's context, one service method, the answer turned into its view), so
//! [`thin_service!`] writes them from a table, and a resource's file is its views and that
//! table. A method whose answer is not the resource names its own view in the table; one that
//! is more than a call and a view (a stream) is written by hand in the table's `and { .. }` block.

use crate::service::Service;

/// What every gRPC service of the API is implemented on: the service layer, nothing else.
#[derive(Debug, Clone)]
pub struct Handlers {
    /// The rules, which every handler calls.
    pub(super) service: Service,
}

impl Handlers {
    /// The handlers over `service`.
    pub fn new(service: Service) -> Self {
        Self { service }
    }
}

/// Implements a generated service trait on [`Handlers`] from a table:
///
/// ```text
/// thin_service! {
///     impl projects_server::Projects: Project by project_view;
///     create(CreateProjectRequest) project_create, get(GetProjectRequest) project_get;
///     list(ListProjectsRequest) project_list -> ListProjectsResponse { projects };
///     answers { versions(VersionsRequest) project_versions -> Versions by versions_view };
///     and { async fn .. }
/// }
/// ```
///
/// Each `method(Request) service_method` answers with the row the service method returns,
/// turned into the resource by the view; `+ rules` hands the schema stage's violations to a
/// service that reports them with its own (`context_with_rules`) instead of refusing at once.
/// A view that needs the service is a method of [`Handlers`]: `by self.budget_view`.
/// The optional `list` answers with every row's view in the list response's field, `page`
/// likewise with the next page's token (the service answers the rows and the token). The
/// optional `answers` are methods whose answer is not the resource, each with its own view;
/// the optional `and` block holds the methods written by hand.
macro_rules! thin_service {
    // The view, then the methods (a table may have none), each to one form for the last arm.
    (impl $module:ident::$service:ident: $resource:ident by self.$view:ident; $($table:tt)*) => {
        $crate::api::handlers::thin_service!(@methods $module::$service: $resource (method $view); $($table)*);
    };
    (impl $module:ident::$service:ident: $resource:ident by $view:ident; $($table:tt)*) => {
        $crate::api::handlers::thin_service!(@methods $module::$service: $resource (function $view); $($table)*);
    };
    (
        @methods $module:ident::$service:ident: $resource:ident $view:tt;
        $( $method:ident($request:ident) $call:ident $(+ $rules:ident)? ),+ ; $($rest:tt)*
    ) => {
        $crate::api::handlers::thin_service!(
            @impl $module::$service: $resource $view [$( $method($request) $call $(+ $rules)? ),+] $($rest)*
        );
    };
    (@methods $module:ident::$service:ident: $resource:ident $view:tt; $($rest:tt)*) => {
        $crate::api::handlers::thin_service!(@impl $module::$service: $resource $view [] $($rest)*);
    };
    (
        @impl $module:ident::$service:ident: $resource:ident $view:tt
        [$( $method:ident($request:ident) $call:ident $(+ $rules:ident)? ),*]
        $( list($list_request:ident) $list_call:ident -> $list:ident { $items:ident }; )?
        $( page($page_request:ident) $page_call:ident -> $page:ident { $page_items:ident }; )?
        $( answers { $( $own_method:ident($own_request:ident) $own_call:ident -> $answer:ident by $answer_view:ident ),+ }; )?
        $( and { $($own:tt)* } )?
    ) => {
        #[tonic::async_trait]
        impl $module::$service for $crate::api::handlers::Handlers {
            $(
                async fn $method(
                    &self,
                    request: tonic::Request<$request>,
                ) -> Result<tonic::Response<$resource>, tonic::Status> {
                    let ctx = $crate::api::handlers::thin_service!(@context request $(, $rules)?);
                    let row = self.service.for_call(&ctx).$call(&ctx, request.into_inner()).await?;
                    Ok(tonic::Response::new($crate::api::handlers::thin_service!(@view self $view row)))
                }
            )*
            $(
                async fn list(
                    &self,
                    request: tonic::Request<$list_request>,
                ) -> Result<tonic::Response<$list>, tonic::Status> {
                    let ctx = $crate::api::context(&request)?;
                    let mut $items = Vec::new();
                    for row in self.service.$list_call(&ctx, request.into_inner()).await? {
                        $items.push($crate::api::handlers::thin_service!(@view self $view row));
                    }
                    Ok(tonic::Response::new($list { $items }))
                }
            )?
            $(
                async fn list(
                    &self,
                    request: tonic::Request<$page_request>,
                ) -> Result<tonic::Response<$page>, tonic::Status> {
                    let ctx = $crate::api::context(&request)?;
                    let (rows, next_page_token) = self.service.$page_call(&ctx, request.into_inner()).await?;
                    let mut $page_items = Vec::new();
                    for row in rows {
                        $page_items.push($crate::api::handlers::thin_service!(@view self $view row));
                    }
                    Ok(tonic::Response::new($page { $page_items, next_page_token }))
                }
            )?
            $($(
                async fn $own_method(
                    &self,
                    request: tonic::Request<$own_request>,
                ) -> Result<tonic::Response<$answer>, tonic::Status> {
                    let ctx = $crate::api::context(&request)?;
                    Ok(tonic::Response::new($answer_view(self.service.$own_call(&ctx, request.into_inner()).await?)))
                }
            )+)?
            $( $($own)* )?
        }
    };
    (@context $request:ident) => {
        $crate::api::context(&$request)?
    };
    (@context $request:ident, rules) => {
        $crate::api::context_with_rules(&$request)?
    };
    (@view $handlers:ident (function $view:ident) $row:ident) => {
        $view($row)
    };
    (@view $handlers:ident (method $view:ident) $row:ident) => {
        $handlers.$view($row).await?
    };
}

pub(crate) use thin_service;

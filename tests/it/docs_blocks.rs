//! The README and every document in `docs/` run as written: every ```` ```sh ```` block, in
//! order, in one shell, in a directory of its own with `bcctl` and `bcd` on `PATH`, against a
//! fresh `bcctl dev` (or, for the documents about running `bc-server` and `bc-worker` on Postgres,
//! against the databases they make). A placeholder such as `<kcl_...>` is the first id with that
//! prefix in the output of the latest command that printed one. A command whose comment starts
//! `# refused` must fail, and the word in the comment's first parentheses (`# refused (inUse)
//! while ...`) must be in its output; every other command must succeed. A block that is not meant
//! to run here (a build, a benchmark) says so on the line before it: `<!-- not run: why -->`. A
//! document with a block to run and no test here fails `every_document_with_a_block_to_run_is_run`.

mod blocks;
mod shell;

use better_compute::store::Backend;

use crate::harness::{System, postgres_admin_url, repo_root};
use blocks::{block_count, steps};
use shell::run_steps;

/// A test per document run against `bcctl dev`, and the list of those documents.
macro_rules! run_against_dev {
    ($($test:ident: $document:literal,)*) => {
        $(#[test]
        fn $test() {
            run_document($document);
        })*
        /// The documents the tests above run against `bcctl dev`.
        const RUN_AGAINST_DEV: &[&str] = &[$($document),*];
    };
}

run_against_dev! {
    the_readme_runs_as_written: "README.md",
    the_kubernetes_walkthrough_runs_as_written: "docs/walkthrough-kubernetes.md",
    the_vps_walkthrough_runs_as_written: "docs/walkthrough-vps.md",
    the_nodes_walkthrough_runs_as_written: "docs/walkthrough-nodes.md",
    the_metal_walkthrough_runs_as_written: "docs/walkthrough-metal.md",
    the_api_guide_runs_as_written: "docs/api.md",
    the_bare_metal_guide_runs_as_written: "docs/bare-metal.md",
    the_drift_guide_runs_as_written: "docs/drift.md",
    the_node_policy_guide_runs_as_written: "docs/nodes.md",
    the_plans_guide_runs_as_written: "docs/plans.md",
    the_problems_guide_runs_as_written: "docs/problems.md",
    the_provider_accounts_guide_runs_as_written: "docs/provider-accounts.md",
}

/// A test per document run on the suite's Postgres with no `bcctl dev`, and the list of those
/// documents. Each names the ports it serves on (as an operator's would; a server already on one
/// of them would answer in its place, so they differ between documents, which run at once) and
/// the databases it makes, dropped before and after it runs.
macro_rules! run_on_postgres {
    ($($test:ident: $document:literal, ports $ports:expr, databases $databases:expr,)*) => {
        $(#[test]
        fn $test() {
            run_on_postgres($document, &$ports, &$databases);
        })*
        /// The documents the tests above run on Postgres.
        const RUN_ON_POSTGRES: &[&str] = &[$($document),*];
    };
}

run_on_postgres! {
    the_first_hour_runs_as_written: "docs/first-hour.md",
        ports [8080, 8081, 8090], databases ["bc_first_hour", "bc_first_hour_restored"],
    the_secret_keys_guide_runs_as_written: "docs/secret-keys.md",
        ports [8180, 9190, 9191], databases ["bc_secret_keys"],
    the_operations_guide_runs_as_written: "docs/operations.md",
        ports [8280, 9290], databases ["bc_operations", "bc_operations_restored"],
}

/// Every block in the README and in docs/ runs in CI: a document with a block to run and no test
/// above fails, and so does a block left out without a reason.
#[test]
fn every_document_with_a_block_to_run_is_run() {
    let mut documents = vec!["README.md".to_owned()];
    for entry in std::fs::read_dir(repo_root().join("docs")).unwrap() {
        let name = entry.unwrap().file_name().into_string().unwrap();
        if name.ends_with(".md") {
            documents.push(format!("docs/{name}"));
        }
    }
    let tested: Vec<&str> = RUN_AGAINST_DEV.iter().chain(RUN_ON_POSTGRES).copied().collect();
    for document in &documents {
        let markdown = std::fs::read_to_string(repo_root().join(document)).unwrap();
        let runs = !steps(&markdown).is_empty();
        let is_tested = tested.contains(&document.as_str());
        assert!(!runs || is_tested, "{document} has blocks to run and no test in tests/it/docs_blocks.rs");
        assert!(runs || !is_tested, "{document} is tested but has no block to run");
        for line in markdown.lines().filter(|line| line.trim_start().starts_with("<!-- not run:")) {
            let why = line.trim().trim_start_matches("<!-- not run:").trim_end_matches("-->").trim();
            assert!(!why.is_empty(), "{document}: a block is not run and does not say why: {line}");
        }
        if !runs {
            println!("{document}: {} block(s), none run", block_count(&markdown));
        }
    }
    assert!(tested.iter().all(|document| documents.iter().any(|d| d == document)), "a tested document is gone");
}

/// Runs every block of the document at `relative` against Postgres, from nothing: no `bcctl dev`,
/// and none of its `databases`, which are dropped again after it.
fn run_on_postgres(relative: &str, ports: &[u16], databases: &[&str]) {
    for port in ports {
        let free = std::net::TcpListener::bind(("127.0.0.1", *port)).is_ok();
        assert!(free, "{relative} serves on 127.0.0.1:{port}, which is taken (a `bcctl dev` running?)");
    }
    databases.iter().copied().for_each(drop_database);
    let dir = tempfile::tempdir().unwrap();
    run_steps(relative, dir.path());
    databases.iter().copied().for_each(drop_database);
}

/// Drops `name` on the suite's Postgres server, closing its connections.
fn drop_database(name: &str) {
    use sqlx::Connection;
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    runtime.block_on(async {
        let mut admin = sqlx::PgConnection::connect(&postgres_admin_url()).await.unwrap();
        let drop = format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)");
        sqlx::query(sqlx::AssertSqlSafe(drop)).execute(&mut admin).await.unwrap();
    });
}

/// Runs every block of the document at `relative` (from the repository's root) against a fresh
/// `bcctl dev`.
fn run_document(relative: &str) {
    let dir = tempfile::tempdir().unwrap();
    let (_dev, _) = System::on(Backend::Sqlite).dev(&dir.path().join(".bc-dev"));
    run_steps(relative, dir.path());
}

//! The handlers of every gRPC service, and the macro that writes the thin ones.
//!
//! One struct, [`Handlers`], implements each generated service trait, in the file of its
//! resource; the router wraps it in each generated server. Most methods are the same three
//! steps (the call's context, one service method, the answer turned into its view), so
//! [`thin_service!`] writes them from a table, and a resource's file is its views and that
//! table. A method whose answer is not a row (a page with a token, a stream) is written by hand
//! in the table's `and { .. }` block.

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
///     and { async fn .. }
/// }
/// ```
///
/// Each `method(Request) service_method` answers with the row the service method returns,
/// turned into the resource by the view; `+ rules` hands the schema stage's violations to a
/// service that reports them with its own (`context_with_rules`) instead of refusing at once.
/// The optional `list` answers with every row's view in the list response's field; the
/// optional `and` block holds the methods written by hand.
macro_rules! thin_service {
    (
        impl $module:ident::$service:ident: $resource:ident by $view:ident;
        $( $method:ident($request:ident) $call:ident $(+ $rules:ident)? ),* ;
        $( list($list_request:ident) $list_call:ident -> $list:ident { $items:ident }; )?
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
                    Ok(tonic::Response::new($view(self.service.$call(&ctx, request.into_inner()).await?)))
                }
            )*
            $(
                async fn list(
                    &self,
                    request: tonic::Request<$list_request>,
                ) -> Result<tonic::Response<$list>, tonic::Status> {
                    let ctx = $crate::api::context(&request)?;
                    let rows = self.service.$list_call(&ctx, request.into_inner()).await?;
                    Ok(tonic::Response::new($list { $items: rows.into_iter().map($view).collect() }))
                }
            )?
            $( $($own)* )?
        }
    };
    (@context $request:ident) => {
        $crate::api::context(&$request)?
    };
    (@context $request:ident, rules) => {
        $crate::api::context_with_rules(&$request)?
    };
}

pub(crate) use thin_service;

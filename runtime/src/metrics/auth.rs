//! Authentication and authorization of `/metrics` callers, like controller-runtime's
//! `filters.WithAuthenticationAndAuthorization`: the caller's bearer token is checked with a
//! TokenReview, then a SubjectAccessReview asks whether that user may `get` the non-resource URL
//! `/metrics`. `config/rbac/metrics_auth_role.yaml` lets the manager create both reviews, and
//! `config/rbac/metrics_reader_role.yaml` is what you bind to Prometheus' service account.

use axum::extract::{Request, State};
use axum::http::{StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use k8s_openapi::api::authentication::v1::{TokenReview, TokenReviewSpec};
use k8s_openapi::api::authorization::v1::{
    NonResourceAttributes, SubjectAccessReview, SubjectAccessReviewSpec,
};
use kube::api::PostParams;
use kube::{Api, Client};

/// Checks the bearer token of each request against the Kubernetes API server.
#[derive(Clone)]
pub struct Authorizer {
    client: Client,
}

/// Why a request was turned away; each maps to an HTTP status.
#[derive(Debug, thiserror::Error)]
pub enum AuthError {
    /// No `Authorization: Bearer ...` header (401).
    #[error("missing bearer token")]
    MissingToken,
    /// The API server did not accept the token (401).
    #[error("invalid bearer token{}", .0.as_deref().map(|e| format!(": {e}")).unwrap_or_default())]
    InvalidToken(Option<String>),
    /// The user may not read this path (403).
    #[error("{user} may not {verb} {path}")]
    Forbidden {
        /// The authenticated user name.
        user: String,
        /// The HTTP verb, lowercase.
        verb: String,
        /// The path asked for.
        path: String,
    },
    /// A review could not be created, e.g. the manager lacks `metrics-auth-role` (500 for the
    /// SubjectAccessReview; a failed TokenReview is a 401, as in controller-runtime).
    #[error("review failed: {0}")]
    Review(#[from] kube::Error),
}

impl AuthError {
    /// The HTTP status this rejection is answered with.
    pub fn status(&self) -> StatusCode {
        match self {
            AuthError::MissingToken | AuthError::InvalidToken(_) => StatusCode::UNAUTHORIZED,
            AuthError::Forbidden { .. } => StatusCode::FORBIDDEN,
            AuthError::Review(_) => StatusCode::INTERNAL_SERVER_ERROR,
        }
    }
}

impl Authorizer {
    /// An authorizer that sends its reviews with `client` (the manager's own identity).
    pub fn new(client: Client) -> Self {
        Authorizer { client }
    }

    /// Authenticates the bearer token in `authorization` (the header's value) and authorizes its user
    /// to use `verb` on `path`.
    pub async fn check(
        &self,
        authorization: Option<&str>,
        verb: &str,
        path: &str,
    ) -> Result<(), AuthError> {
        let token = authorization
            .and_then(|value| {
                let (scheme, token) = value.trim().split_once(' ')?;
                scheme.eq_ignore_ascii_case("bearer").then(|| token.trim())
            })
            .filter(|token| !token.is_empty())
            .ok_or(AuthError::MissingToken)?;

        let review = TokenReview {
            spec: TokenReviewSpec {
                token: Some(token.to_owned()),
                ..TokenReviewSpec::default()
            },
            ..TokenReview::default()
        };
        let review = Api::<TokenReview>::all(self.client.clone())
            .create(&PostParams::default(), &review)
            .await
            .map_err(|error| AuthError::InvalidToken(Some(error.to_string())))?;
        let status = review.status.unwrap_or_default();
        if status.authenticated != Some(true) {
            return Err(AuthError::InvalidToken(status.error));
        }
        let user = status.user.unwrap_or_default();

        let access = SubjectAccessReview {
            spec: SubjectAccessReviewSpec {
                user: user.username.clone(),
                groups: user.groups,
                uid: user.uid,
                extra: user.extra,
                non_resource_attributes: Some(NonResourceAttributes {
                    path: Some(path.to_owned()),
                    verb: Some(verb.to_owned()),
                }),
                ..SubjectAccessReviewSpec::default()
            },
            ..SubjectAccessReview::default()
        };
        let access = Api::<SubjectAccessReview>::all(self.client.clone())
            .create(&PostParams::default(), &access)
            .await?;
        if access.status.is_some_and(|status| status.allowed) {
            Ok(())
        } else {
            Err(AuthError::Forbidden {
                user: user.username.unwrap_or_default(),
                verb: verb.to_owned(),
                path: path.to_owned(),
            })
        }
    }
}

/// axum middleware: lets the request through only when [`Authorizer::check`] allows it.
pub(super) async fn require_authorization(
    State(authorizer): State<Authorizer>,
    request: Request,
    next: Next,
) -> Response {
    let authorization = request
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|value| value.to_str().ok());
    // Kubernetes verbs of non-resource URLs are the lowercase HTTP methods.
    let verb = request.method().as_str().to_ascii_lowercase();
    let path = request.uri().path().to_owned();
    match authorizer.check(authorization, &verb, &path).await {
        Ok(()) => next.run(request).await,
        Err(error) => {
            let status = error.status();
            if status == StatusCode::INTERNAL_SERVER_ERROR {
                tracing::error!("cannot authorize a metrics request: {error}");
            } else {
                tracing::debug!("rejected a metrics request: {error}");
            }
            // The body does not say why, to tell an attacker nothing about tokens or users.
            let reason = status.canonical_reason().unwrap_or("error");
            (status, reason).into_response()
        }
    }
}

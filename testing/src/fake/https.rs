//! How the fake API server calls a webhook registered by URL (`clientConfig.url`), as the API
//! server does: an HTTPS `POST` of the review, the server's certificate verified against the
//! `caBundle` and the URL's host (an IP address must be among the certificate's IP address
//! SANs), within the webhook's `timeoutSeconds`.
//!
//! The call blocks its thread: the fake answers requests under one lock, and a webhook is called
//! in the middle of a write or a read. The webhook server must therefore run on another thread
//! than the client whose request calls it, as a real webhook runs in another process.
//!
//! A small HTTP/1.1 client written on rustls's blocking streams, because the runtime has no HTTP
//! client of its own as a dependency (kube's is tied to its API client).

use std::io::{self, Write as _};
use std::net::{TcpStream, ToSocketAddrs as _};
use std::sync::Arc;
use std::time::Duration;

use http::Uri;
use rustls::pki_types::pem::PemObject as _;
use rustls::pki_types::{CertificateDer, ServerName};
use rustls::{ClientConfig, ClientConnection, RootCertStore, StreamOwned};
use serde_json::Value;

/// The API server's default `timeoutSeconds` for admission webhooks, and the timeout of its
/// conversion webhook calls.
pub(super) const DEFAULT_TIMEOUT: Duration = Duration::from_secs(10);

/// Where a webhook is called: its `clientConfig` with a `url`.
#[derive(Clone, Debug)]
pub(super) struct Endpoint {
    pub(super) url: String,
    /// The CAs (PEM) the server's certificate must chain to.
    pub(super) ca_bundle: Vec<u8>,
    pub(super) timeout: Duration,
}

impl Endpoint {
    /// The endpoint of a `clientConfig` (JSON, `caBundle` base64 as stored), if it has a `url`.
    pub(super) fn of(client_config: &Value, timeout: Duration) -> Option<Self> {
        let url = client_config["url"].as_str()?.to_owned();
        let ca_bundle = client_config["caBundle"]
            .as_str()
            .and_then(base64_decode)
            .unwrap_or_default();
        Some(Self {
            url,
            ca_bundle,
            timeout,
        })
    }

    /// The URL as the API server posts to it, and as it names it in errors: with `?timeout=`.
    pub(super) fn request_url(&self) -> String {
        let separator = if self.url.contains('?') { '&' } else { '?' };
        format!("{}{separator}timeout={}s", self.url, self.timeout.as_secs())
    }

    /// Posts `body` and returns the JSON answer, or why there is none, in words close to the
    /// API server's (Go's `Post "<url>": <error>`).
    pub(super) fn post(&self, body: &Value) -> Result<Value, String> {
        let url = self.request_url();
        self.try_post(&url, body)
            .map_err(|error| format!("Post \"{url}\": {error}"))
    }

    fn try_post(&self, url: &str, body: &Value) -> Result<Value, String> {
        let uri: Uri = url
            .parse()
            .map_err(|error| format!("invalid URL: {error}"))?;
        if uri.scheme_str() != Some("https") {
            return Err("only https URLs are called".to_owned());
        }
        let host = uri.host().ok_or("no host")?;
        // `[::1]` in a URL, `::1` as a name to verify and connect to.
        let host = host
            .trim_start_matches('[')
            .trim_end_matches(']')
            .to_owned();
        let port = uri.port_u16().unwrap_or(443);
        let config = self.tls_config()?;
        let name = ServerName::try_from(host.clone()).map_err(|error| error.to_string())?;
        let connection =
            ClientConnection::new(Arc::new(config), name).map_err(|error| error.to_string())?;
        let socket = connect(&host, port, self.timeout).map_err(|error| error.to_string())?;
        let mut tls = StreamOwned::new(connection, socket);

        let body = serde_json::to_vec(body).map_err(|error| error.to_string())?;
        let path = uri.path_and_query().map_or("/", |path| path.as_str());
        let authority = uri.authority().map_or("", |authority| authority.as_str());
        let head = format!(
            "POST {path} HTTP/1.1\r\nHost: {authority}\r\nContent-Type: application/json\r\n\
             Accept: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
            body.len()
        );
        tls.write_all(head.as_bytes())
            .and_then(|()| tls.write_all(&body))
            .and_then(|()| tls.flush())
            .map_err(tls_error)?;
        let response = read_response(&mut tls)?;
        if response.status != 200 {
            return Err(format!(
                "the server responded with status code {}",
                response.status
            ));
        }
        serde_json::from_slice(&response.body)
            .map_err(|error| format!("the response is not JSON: {error}"))
    }

    /// TLS 1.2 or 1.3 trusting exactly the `caBundle` (the API server uses the system's roots
    /// without one; the fake has none, so such a call fails verification).
    fn tls_config(&self) -> Result<ClientConfig, String> {
        let mut roots = RootCertStore::empty();
        for cert in CertificateDer::pem_slice_iter(&self.ca_bundle).flatten() {
            // A certificate that is no usable trust anchor trusts nothing, as in Go.
            let _ = roots.add(cert);
        }
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let mut config = ClientConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .map_err(|error| error.to_string())?
            .with_root_certificates(roots)
            .with_no_client_auth();
        config.alpn_protocols = vec![b"http/1.1".to_vec()];
        Ok(config)
    }
}

fn connect(host: &str, port: u16, timeout: Duration) -> io::Result<TcpStream> {
    let mut last_error = io::Error::new(io::ErrorKind::NotFound, "no address for the host");
    for address in (host, port).to_socket_addrs()? {
        match TcpStream::connect_timeout(&address, timeout) {
            Ok(socket) => {
                socket.set_read_timeout(Some(timeout))?;
                socket.set_write_timeout(Some(timeout))?;
                return Ok(socket);
            }
            Err(error) => last_error = error,
        }
    }
    Err(last_error)
}

/// A failed handshake reads as Go's `tls: failed to verify certificate: …`.
fn tls_error(error: io::Error) -> String {
    match error
        .get_ref()
        .and_then(|inner| inner.downcast_ref::<rustls::Error>())
    {
        Some(rustls::Error::InvalidCertificate(why)) => {
            format!("tls: failed to verify certificate: {why:?}")
        }
        _ => error.to_string(),
    }
}

struct Response {
    status: u16,
    body: Vec<u8>,
}

/// Reads an HTTP/1.1 response: its status, and its body by `Content-Length`, chunks, or up to
/// the end of the connection (asked for with `Connection: close`).
fn read_response(stream: &mut impl io::Read) -> Result<Response, String> {
    let mut raw = Vec::new();
    let mut buffer = [0; 8192];
    let head_end = loop {
        if let Some(end) = find(&raw, b"\r\n\r\n") {
            break end;
        }
        let read = stream.read(&mut buffer).map_err(tls_error)?;
        if read == 0 {
            return Err("EOF before the response's headers".to_owned());
        }
        raw.extend_from_slice(&buffer[..read]);
    };
    let head = String::from_utf8_lossy(&raw[..head_end]).into_owned();
    let mut lines = head.split("\r\n");
    let status = lines
        .next()
        .and_then(|line| line.split(' ').nth(1))
        .and_then(|code| code.parse().ok())
        .ok_or("no status line")?;
    let header = |name: &str| {
        head.split("\r\n").skip(1).find_map(|line| {
            let (key, value) = line.split_once(':')?;
            key.trim()
                .eq_ignore_ascii_case(name)
                .then(|| value.trim().to_owned())
        })
    };
    let mut body = raw[head_end + 4..].to_vec();
    if let Some(length) = header("content-length").and_then(|length| length.parse().ok()) {
        while body.len() < length {
            let read = stream.read(&mut buffer).map_err(tls_error)?;
            if read == 0 {
                return Err("EOF before the end of the response's body".to_owned());
            }
            body.extend_from_slice(&buffer[..read]);
        }
        body.truncate(length);
    } else {
        // Up to the end of the connection; a peer that closes without TLS's close_notify has
        // still sent everything.
        match stream.read_to_end(&mut body) {
            Ok(_) => {}
            Err(error) if error.kind() == io::ErrorKind::UnexpectedEof => {}
            Err(error) => return Err(tls_error(error)),
        }
        if header("transfer-encoding").is_some_and(|coding| coding.contains("chunked")) {
            body = dechunk(&body).ok_or("a malformed chunked body")?;
        }
    }
    Ok(Response { status, body })
}

/// The body of a `Transfer-Encoding: chunked` response.
fn dechunk(mut raw: &[u8]) -> Option<Vec<u8>> {
    let mut body = Vec::new();
    loop {
        let line_end = find(raw, b"\r\n")?;
        let size = std::str::from_utf8(&raw[..line_end]).ok()?;
        let size = usize::from_str_radix(size.split(';').next()?.trim(), 16).ok()?;
        raw = &raw[line_end + 2..];
        if size == 0 {
            return Some(body);
        }
        body.extend_from_slice(raw.get(..size)?);
        raw = raw.get(size + 2..)?;
    }
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack
        .windows(needle.len())
        .position(|window| window == needle)
}

/// Decodes standard base64 (with padding), as Go's `[]byte` fields are written in JSON.
/// Written here: no base64 crate is a dependency of the runtime.
fn base64_decode(text: &str) -> Option<Vec<u8>> {
    fn value(byte: u8) -> Option<u32> {
        match byte {
            b'A'..=b'Z' => Some(u32::from(byte - b'A')),
            b'a'..=b'z' => Some(u32::from(byte - b'a') + 26),
            b'0'..=b'9' => Some(u32::from(byte - b'0') + 52),
            b'+' => Some(62),
            b'/' => Some(63),
            _ => None,
        }
    }
    let bytes: Vec<u8> = text
        .bytes()
        .filter(|byte| !byte.is_ascii_whitespace())
        .collect();
    if !bytes.len().is_multiple_of(4) {
        return None;
    }
    let mut decoded = Vec::with_capacity(bytes.len() / 4 * 3);
    for quad in bytes.chunks(4) {
        let padding = quad.iter().rev().take_while(|&&byte| byte == b'=').count();
        if padding > 2 {
            return None;
        }
        let mut bits = 0;
        for &byte in &quad[..4 - padding] {
            bits = bits << 6 | value(byte)?;
        }
        bits <<= 6 * padding;
        let triple = [(bits >> 16) as u8, (bits >> 8) as u8, bits as u8];
        decoded.extend_from_slice(&triple[..3 - padding]);
    }
    Some(decoded)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_as_go_writes_it() {
        assert_eq!(base64_decode("aGVsbG8=").unwrap(), b"hello");
        assert_eq!(base64_decode("aGk=").unwrap(), b"hi");
        assert_eq!(base64_decode("YWJj").unwrap(), b"abc");
        assert_eq!(base64_decode("").unwrap(), b"");
        assert_eq!(base64_decode("a"), None);
        assert_eq!(base64_decode("a!==").map(|_| ()), None);
    }

    #[test]
    fn responses_by_length_and_by_chunks() {
        let by_length = b"HTTP/1.1 200 OK\r\ncontent-length: 4\r\n\r\n{}  trailing";
        let response = read_response(&mut &by_length[..]).unwrap();
        assert_eq!((response.status, &response.body[..]), (200, &b"{}  "[..]));
        let chunked =
            b"HTTP/1.1 500 Internal\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{\"\r\n4\r\na\":1\r\n0\r\n\r\n";
        let response = read_response(&mut &chunked[..]).unwrap();
        assert_eq!(
            (response.status, &response.body[..]),
            (500, &b"{\"a\":1"[..])
        );
        assert!(read_response(&mut &b"HTTP/1.1 200"[..]).is_err());
    }
}

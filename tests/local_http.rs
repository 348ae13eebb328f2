//! A small HTTP/1.1 server on 127.0.0.1 inside the test process, for tests that need a server
//! to behave in one exact way (redirect elsewhere, send too much, call every model `model`)
//! and to see every request it received. Each connection is read as one request (headers and a
//! `Content-Length` body) and answered by the handler, then closed.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// One request as the server read it.
#[derive(Debug, Clone)]
pub struct Received {
    pub method: String,
    pub path: String,
    /// Header lines as sent, `Name: value`.
    pub headers: Vec<String>,
    pub body: String,
}

/// What the handler answers: status, extra headers, and the body's bytes.
pub struct Reply {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Reply {
    pub fn json(text: &str) -> Reply {
        Reply { status: 200, headers: vec![("Content-Type".into(), "application/json".into())], body: text.as_bytes().to_vec() }
    }
}

/// A running server; it stops accepting when the test process ends.
pub struct LocalServer {
    pub port: u16,
    received: Arc<Mutex<Vec<Received>>>,
}

impl LocalServer {
    pub fn start(handler: impl Fn(&Received) -> Reply + Send + Sync + 'static) -> LocalServer {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1");
        let port = listener.local_addr().expect("local address").port();
        let received = Arc::new(Mutex::new(Vec::new()));
        let log = received.clone();
        let handler = Arc::new(handler);
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let (log, handler) = (log.clone(), handler.clone());
                std::thread::spawn(move || serve(stream, &*handler, &log));
            }
        });
        LocalServer { port, received }
    }

    pub fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}{path}", self.port)
    }

    pub fn received(&self) -> Vec<Received> {
        self.received.lock().expect("request log").clone()
    }
}

fn serve(stream: TcpStream, handler: &dyn Fn(&Received) -> Reply, log: &Mutex<Vec<Received>>) {
    let _ = stream.set_read_timeout(Some(Duration::from_secs(30)));
    let mut reader = BufReader::new(match stream.try_clone() {
        Ok(s) => s,
        Err(_) => return,
    });
    let mut line = String::new();
    if reader.read_line(&mut line).unwrap_or(0) == 0 {
        return;
    }
    let mut parts = line.split_whitespace();
    let (method, path) = (parts.next().unwrap_or("").to_string(), parts.next().unwrap_or("").to_string());
    let mut headers = Vec::new();
    let mut length = 0usize;
    loop {
        let mut header = String::new();
        if reader.read_line(&mut header).unwrap_or(0) == 0 {
            break;
        }
        let header = header.trim_end().to_string();
        if header.is_empty() {
            break;
        }
        if let Some((name, value)) = header.split_once(':') {
            if name.eq_ignore_ascii_case("content-length") {
                length = value.trim().parse().unwrap_or(0);
            }
        }
        headers.push(header);
    }
    let mut body = vec![0u8; length];
    let _ = reader.read_exact(&mut body);
    let request = Received { method, path, headers, body: String::from_utf8_lossy(&body).into_owned() };
    log.lock().expect("request log").push(request.clone());
    let reply = handler(&request);
    let mut out = stream;
    let mut head = format!("HTTP/1.1 {} X\r\nConnection: close\r\nContent-Length: {}\r\n", reply.status, reply.body.len());
    for (name, value) in &reply.headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    head.push_str("\r\n");
    let _ = out.write_all(head.as_bytes());
    let _ = out.write_all(&reply.body);
    let _ = out.flush();
}

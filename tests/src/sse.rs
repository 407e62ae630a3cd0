//! Reading Server-Sent Events from the HTTP gateway's streams (Analyze, AnalyzeGame).

use futures_util::StreamExt;
use serde_json::Value;

/// Reads SSE events (name, JSON data) until the stream ends or `limit` events arrived (then
/// the response is dropped, which closes the stream as a browser going away would).
pub async fn events(resp: reqwest::Response, limit: usize) -> Vec<(String, Value)> {
    let mut events = Vec::new();
    let mut buf = String::new();
    let mut body = resp.bytes_stream();
    while let Some(chunk) = body.next().await {
        buf.push_str(&String::from_utf8_lossy(&chunk.expect("SSE body chunk")));
        while let Some(end) = buf.find("\n\n") {
            let block: String = buf.drain(..end + 2).collect();
            let mut name = String::from("message");
            let mut data = String::new();
            for line in block.lines() {
                if let Some(v) = line.strip_prefix("event:") {
                    name = v.trim().to_owned();
                } else if let Some(v) = line.strip_prefix("data:") {
                    data.push_str(v.trim_start());
                }
            }
            if !data.is_empty() {
                events.push((name, serde_json::from_str(&data).expect("SSE data is JSON")));
            }
            if events.len() >= limit {
                return events;
            }
        }
    }
    events
}

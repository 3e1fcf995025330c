//! cpu (NB11xx): `serde_json::from_slice` of a multi-megabyte document against the same parse in
//! `spawn_blocking`.
//!
//! Nothing here enters the kernel: the worker is held by computation. A unit parses the document
//! into a `serde_json::Value` repeatedly until 50 ms have passed (at least once), the shape of a
//! handler that deserialises a large request body or a batch of them.

use std::sync::Arc;
use std::time::Duration;

use super::category::{
    offload, repeat_for, CategoryConfig, CategorySpec, Fixture, RunUnits, UnitFuture, Variant,
};

pub const SPEC: CategorySpec = CategorySpec {
    name: "cpu",
    rule_prefix: "NB11",
    confirmation: "serde_json::from_slice of a 4 MB document, repeated for 50 ms, in one task per worker vs the same parse in spawn_blocking",
    blocking_api: "serde_json::from_slice (4 MB)",
    alternative_api: "spawn_blocking(serde_json::from_slice)",
    cpu_bound: true,
    setup,
};

/// Approximate document size.
pub const DOCUMENT_BYTES: usize = 4 << 20;

/// A deterministic JSON document of about `bytes` bytes: an array of order-like records with
/// nested objects, arrays, strings and numbers (what an API batch looks like).
pub fn document(bytes: usize) -> Vec<u8> {
    let mut out = String::with_capacity(bytes + 1024);
    out.push('[');
    let mut i: u64 = 0;
    while out.len() < bytes {
        if i > 0 {
            out.push(',');
        }
        let price = (i * 7919 % 100_000) as f64 / 100.0;
        out.push_str(&format!(
            r#"{{"id":{i},"customer":"customer-{c:06}","price":{price},"paid":{paid},"tags":["t{a}","t{b}","priority"],"lines":[{{"sku":"SKU-{s1:05}","qty":{q1}}},{{"sku":"SKU-{s2:05}","qty":{q2}}}],"note":"order {i} for customer {c}"}}"#,
            c = i % 9973,
            paid = matches!(i % 3, 0),
            a = i % 17,
            b = i % 31,
            s1 = i * 31 % 99_991,
            q1 = i % 9 + 1,
            s2 = i * 37 % 99_991,
            q2 = i % 5 + 1,
        ));
        i += 1;
    }
    out.push(']');
    out.into_bytes()
}

/// Parses the document once, checking it is what we built.
pub fn parse(doc: &[u8]) -> Result<(), String> {
    let value: serde_json::Value = serde_json::from_slice(doc).map_err(|e| e.to_string())?;
    match value.as_array() {
        Some(items) if !items.is_empty() => Ok(()),
        _ => Err("document is not a non-empty array".to_string()),
    }
}

struct CpuFixture {
    doc: Arc<Vec<u8>>,
}

struct Units {
    doc: Arc<Vec<u8>>,
    unit: Duration,
    variant: Variant,
}

fn setup(_: &CategoryConfig) -> Result<Box<dyn Fixture>, String> {
    Ok(Box::new(CpuFixture {
        doc: Arc::new(document(DOCUMENT_BYTES)),
    }))
}

impl Fixture for CpuFixture {
    fn start_run(
        &self,
        cfg: &CategoryConfig,
        variant: Variant,
    ) -> Result<Arc<dyn RunUnits>, String> {
        Ok(Arc::new(Units {
            doc: self.doc.clone(),
            unit: cfg.unit,
            variant,
        }))
    }
}

impl RunUnits for Units {
    fn call(self: Arc<Self>, _: usize, _: usize) -> UnitFuture {
        Box::pin(async move {
            let (doc, unit) = (self.doc.clone(), self.unit);
            let work = move || repeat_for(unit, || parse(&doc)).map(drop);
            match self.variant {
                Variant::Blocking => work(),
                Variant::Alternative => offload(work).await,
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn document_is_valid_json_of_the_requested_size() {
        let doc = document(64 << 10);
        assert!(doc.len() >= 64 << 10 && doc.len() < (64 << 10) + 1024);
        parse(&doc).unwrap();
        assert_eq!(doc, document(64 << 10), "deterministic");
        assert!(parse(b"{}").is_err());
    }
}

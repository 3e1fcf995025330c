//! db-sync (NB05xx): a heavy query on a real SQLite database through `rusqlite` (a synchronous
//! driver) against the same query in `spawn_blocking`.
//!
//! The database is a file in a temporary directory with 60 000 rows; the query is an aggregate
//! with a `LIKE` filter that scans the whole table. A unit runs it repeatedly for 50 ms (at least
//! once), the shape of a handler that issues a few reporting queries. Each offender has its own
//! connection, as it would from a pool.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rusqlite::Connection;

use super::category::{
    offload, repeat_for, CategoryConfig, CategorySpec, Fixture, RunUnits, TempDir, UnitFuture,
    Variant,
};

pub const SPEC: CategorySpec = CategorySpec {
    name: "db-sync",
    rule_prefix: "NB05",
    confirmation: "rusqlite aggregate query scanning 60 000 rows of a SQLite file, repeated for 50 ms, in one task per worker vs the same query in spawn_blocking",
    blocking_api: "rusqlite::Statement::query_row",
    alternative_api: "spawn_blocking(rusqlite)",
    cpu_bound: true,
    setup,
};

/// Rows in the table.
pub const ROWS: usize = 60_000;

/// The heavy query: a full scan with a string filter, grouping and ordering.
pub const QUERY: &str = "SELECT count(*), sum(qty), max(grp) FROM (
        SELECT grp, count(*) AS qty FROM orders
        WHERE note LIKE '%7%' OR customer LIKE '%42%'
        GROUP BY grp ORDER BY qty DESC)";

struct DbFixture {
    _dir: TempDir,
    path: PathBuf,
}

struct Units {
    connections: Vec<Mutex<Connection>>,
    unit: Duration,
    variant: Variant,
}

/// Creates the database file with [`ROWS`] rows.
pub fn create_database(path: &std::path::Path, rows: usize) -> rusqlite::Result<()> {
    let mut conn = Connection::open(path)?;
    conn.execute_batch(
        "PRAGMA journal_mode = WAL;
         CREATE TABLE orders (id INTEGER PRIMARY KEY, grp INTEGER, customer TEXT, note TEXT);",
    )?;
    let tx = conn.transaction()?;
    {
        let mut insert =
            tx.prepare("INSERT INTO orders (grp, customer, note) VALUES (?1, ?2, ?3)")?;
        for i in 0..rows {
            insert.execute((
                (i % 997) as i64,
                format!("customer-{:06}", i * 7 % 100_003),
                format!("order {i} shipped in {} parcels", i % 13),
            ))?;
        }
    }
    tx.commit()
}

/// Runs [`QUERY`] once; returns the number of groups.
pub fn run_query(conn: &Connection) -> rusqlite::Result<i64> {
    conn.prepare_cached(QUERY)?.query_row([], |row| row.get(0))
}

fn setup(_: &CategoryConfig) -> Result<Box<dyn Fixture>, String> {
    let dir = TempDir::new("db").map_err(|e| format!("temp dir: {e}"))?;
    let path = dir.path().join("orders.sqlite");
    create_database(&path, ROWS).map_err(|e| format!("sqlite: {e}"))?;
    Ok(Box::new(DbFixture { _dir: dir, path }))
}

impl Fixture for DbFixture {
    fn start_run(
        &self,
        cfg: &CategoryConfig,
        variant: Variant,
    ) -> Result<Arc<dyn RunUnits>, String> {
        let connections = (0..cfg.offenders)
            .map(|_| Connection::open(&self.path).map(Mutex::new))
            .collect::<rusqlite::Result<Vec<_>>>()
            .map_err(|e| format!("sqlite: {e}"))?;
        Ok(Arc::new(Units {
            connections,
            unit: cfg.unit,
            variant,
        }))
    }
}

impl Units {
    fn query_for_a_unit(&self, offender: usize) -> Result<(), String> {
        // Each offender owns its connection; the mutex is never contended.
        let conn = self.connections[offender % self.connections.len()]
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        repeat_for(self.unit, || run_query(&conn).map(drop)).map(drop)
    }
}

impl RunUnits for Units {
    fn call(self: Arc<Self>, offender: usize, _: usize) -> UnitFuture {
        Box::pin(async move {
            match self.variant {
                Variant::Blocking => self.query_for_a_unit(offender),
                Variant::Alternative => offload(move || self.query_for_a_unit(offender)).await,
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_query_runs_on_a_small_database() {
        let dir = TempDir::new("db-test").unwrap();
        let path = dir.path().join("t.sqlite");
        create_database(&path, 2_000).unwrap();
        let conn = Connection::open(&path).unwrap();
        let groups = run_query(&conn).unwrap();
        assert!(groups > 0 && groups <= 997, "{groups}");
    }
}

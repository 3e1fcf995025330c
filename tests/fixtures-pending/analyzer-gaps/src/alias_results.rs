//! Generic type aliases are not substituted. `rusqlite::Result<T>` is
//! `type Result<T, E = Error> = std::result::Result<T, E>`; `Index::resolve_type` resolves an alias
//! to its target with no generic arguments (index.rs, `TypeKind::Alias` → `resolve_type_depth(m,
//! target, &[], ..)`), so `Connection::open(p)?` is typed `Result<T>` with `T` unknown and every
//! method called on the value afterwards is unresolved. Needed: bind the alias's generic
//! parameters to the written arguments (and defaults) before resolving the target. The same
//! applies to `mysql::Result`, `redis::RedisResult`, `io::Result`-style aliases of every crate.

use mysql::prelude::Queryable;

pub async fn sqlite(path: &str) -> rusqlite::Result<i64> {
    let conn = rusqlite::Connection::open(path)?; // expect: NB0501
    conn.execute("DELETE FROM t", []); // expect: NB0501
    conn.query_row("SELECT count(*) FROM t", [], |r| r.get(0)) // expect: NB0501
}

pub async fn mysql_pool(pool: &mysql::Pool) -> mysql::Result<()> {
    let mut conn = pool.get_conn()?; // expect: NB0503
    conn.query_drop("UPDATE t SET n = n + 1") // expect: NB0503
}

pub async fn redis_client(url: &str) -> redis::RedisResult<()> {
    let client = redis::Client::open(url)?;
    let con = client.get_connection()?; // expect: NB0505
    Ok(())
}

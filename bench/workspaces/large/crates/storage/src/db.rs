use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use sqlx::postgres::{PgPool, PgPoolOptions};
use sqlx::Row;
use std::time::Duration;
use uuid::Uuid;

use crate::{Result, StorageError};

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct User {
    pub id: Uuid,
    pub email: String,
    pub display_name: String,
    pub password_hash: String,
    pub created_at: DateTime<Utc>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Order {
    pub id: Uuid,
    pub user_id: Uuid,
    pub total_cents: i64,
    pub items: serde_json::Value,
    pub created_at: DateTime<Utc>,
}

#[derive(Clone)]
pub struct Db {
    pool: PgPool,
}

impl Db {
    pub async fn connect(url: &str) -> Result<Self> {
        let pool = PgPoolOptions::new()
            .max_connections(16)
            .acquire_timeout(Duration::from_secs(3))
            .connect(url)
            .await?;
        Ok(Self { pool })
    }

    pub async fn user_by_id(&self, id: Uuid) -> Result<User> {
        let row = sqlx::query(
            "SELECT id, email, display_name, password_hash, created_at FROM users WHERE id = $1",
        )
        .bind(id)
        .fetch_optional(&self.pool)
        .await?
        .ok_or_else(|| StorageError::NotFound(format!("user {id}")))?;
        Ok(User {
            id: row.try_get("id")?,
            email: row.try_get("email")?,
            display_name: row.try_get("display_name")?,
            password_hash: row.try_get("password_hash")?,
            created_at: row.try_get("created_at")?,
        })
    }

    pub async fn user_by_email(&self, email: &str) -> Result<Option<User>> {
        let row = sqlx::query(
            "SELECT id, email, display_name, password_hash, created_at FROM users WHERE email = $1",
        )
        .bind(email)
        .fetch_optional(&self.pool)
        .await?;
        Ok(match row {
            Some(row) => Some(User {
                id: row.try_get("id")?,
                email: row.try_get("email")?,
                display_name: row.try_get("display_name")?,
                password_hash: row.try_get("password_hash")?,
                created_at: row.try_get("created_at")?,
            }),
            None => None,
        })
    }

    pub async fn insert_user(&self, email: &str, display_name: &str, password_hash: &str) -> Result<User> {
        let user = User {
            id: Uuid::new_v4(),
            email: email.to_owned(),
            display_name: display_name.to_owned(),
            password_hash: password_hash.to_owned(),
            created_at: Utc::now(),
        };
        sqlx::query(
            "INSERT INTO users (id, email, display_name, password_hash, created_at) VALUES ($1, $2, $3, $4, $5)",
        )
        .bind(user.id)
        .bind(&user.email)
        .bind(&user.display_name)
        .bind(&user.password_hash)
        .bind(user.created_at)
        .execute(&self.pool)
        .await?;
        Ok(user)
    }

    pub async fn orders_for(&self, user_id: Uuid, limit: i64) -> Result<Vec<Order>> {
        let rows = sqlx::query(
            "SELECT id, user_id, total_cents, items, created_at FROM orders WHERE user_id = $1 ORDER BY created_at DESC LIMIT $2",
        )
        .bind(user_id)
        .bind(limit)
        .fetch_all(&self.pool)
        .await?;
        rows.into_iter()
            .map(|row| {
                Ok(Order {
                    id: row.try_get("id")?,
                    user_id: row.try_get("user_id")?,
                    total_cents: row.try_get("total_cents")?,
                    items: row.try_get("items")?,
                    created_at: row.try_get("created_at")?,
                })
            })
            .collect()
    }

    pub async fn insert_order(&self, order: &Order) -> Result<()> {
        let mut tx = self.pool.begin().await?;
        sqlx::query("INSERT INTO orders (id, user_id, total_cents, items, created_at) VALUES ($1, $2, $3, $4, $5)")
            .bind(order.id)
            .bind(order.user_id)
            .bind(order.total_cents)
            .bind(&order.items)
            .bind(order.created_at)
            .execute(&mut *tx)
            .await?;
        sqlx::query("UPDATE users SET last_order_at = $2 WHERE id = $1")
            .bind(order.user_id)
            .bind(order.created_at)
            .execute(&mut *tx)
            .await?;
        tx.commit().await?;
        Ok(())
    }

    pub async fn health(&self) -> Result<()> {
        sqlx::query("SELECT 1").execute(&self.pool).await?;
        Ok(())
    }
}

pub mod admin;
pub mod files;
pub mod orders;
pub mod ratelimit;
pub mod reports;
pub mod users;

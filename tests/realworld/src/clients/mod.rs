pub mod fx;
pub mod inventory;
pub mod payments;
pub mod webhook;

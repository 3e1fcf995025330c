use lettre::message::header::ContentType;
use lettre::{AsyncTransport, Message, SmtpTransport, Transport};

use crate::error::{ApiError, ApiResult};
use crate::routes::orders::Order;
use crate::state::AppState;

fn receipt_message(order: &Order) -> ApiResult<Message> {
    Message::builder()
        .from("orders@example.com".parse().map_err(|e: lettre::address::AddressError| ApiError::Internal(e.into()))?)
        .to(order.customer.parse().map_err(|e: lettre::address::AddressError| ApiError::Internal(e.into()))?)
        .subject(format!("Your order {}", order.id))
        .header(ContentType::TEXT_PLAIN)
        .body(format!("Thank you! Total: {:.2} {}", order.amount_cents as f64 / 100.0, order.currency))
        .map_err(|e| ApiError::Internal(e.into()))
}

/// Correct: the async transport.
pub async fn send_receipt(state: &AppState, order: &Order) -> ApiResult<()> {
    let msg = receipt_message(order)?;
    state.mailer.send(msg).await.map_err(|e| ApiError::Internal(e.into()))?;
    Ok(())
}

/// Used by the admin "resend" path. BUG: lettre's synchronous SMTP transport, from async code.
pub fn send_receipt_sync(smtp_host: &str, order: &Order) -> ApiResult<()> {
    let msg = receipt_message(order)?;
    let transport = SmtpTransport::builder_dangerous(smtp_host).port(25).build();
    transport.send(&msg).map_err(|e| ApiError::Internal(e.into()))?;
    Ok(())
}

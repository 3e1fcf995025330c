// Valid in edition 2015: a bare trait object (signal-hook-registry 1.4.8) ...
#[allow(bare_trait_objects)]
pub type Action = Fn(u32) + Send + Sync;

// ... and `await` as an identifier (nb 0.1.3), here the name of a macro that is cfg'd out.
#[cfg(feature = "unstable")]
#[macro_export]
macro_rules! await {
    ($e:expr) => {
        $e
    };
}

pub fn wait() {
    std::thread::sleep(std::time::Duration::from_millis(5));
}

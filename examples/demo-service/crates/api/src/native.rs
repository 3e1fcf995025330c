//! A native checksum routine, linked from C.

extern "C" {
    /// Computes a CRC of `len` bytes at `data`; may take milliseconds on large buffers.
    fn crc32_native(data: *const u8, len: usize) -> u32;
}

pub fn checksum(data: &[u8]) -> u32 {
    // SAFETY: `data` is valid for `len` bytes for the duration of the call.
    unsafe { crc32_native(data.as_ptr(), data.len()) }
}

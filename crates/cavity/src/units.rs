//! Numbers in messages and reports: lengths and areas with significant
//! digits at any scale ([`significant`]), byte counts ([`bytes`]).

/// `x` with `digits` significant digits (at least 1): fixed notation for
/// magnitudes from 1e-3 to below 1e6 (`0.01234`, `123.4`), scientific
/// below and above (`1.234e-5`); `0`, `inf`, `-inf` and `NaN` as they are.
/// A length of a model in micrometres reads `2.500e-6`, never `0.000000`.
pub fn significant(x: f64, digits: usize) -> String {
    let digits = digits.max(1);
    if x == 0.0 || !x.is_finite() {
        return format!("{x}");
    }
    let magnitude = x.abs().log10().floor() as i32;
    if (-3..6).contains(&magnitude) {
        let decimals = (digits as i32 - 1 - magnitude).max(0) as usize;
        format!("{x:.decimals$}")
    } else {
        format!("{x:.*e}", digits - 1)
    }
}

/// `n` bytes in words with binary prefixes: `512 B`, `1.5 KiB`,
/// `12.3 GiB`.
pub fn bytes(n: u64) -> String {
    const UNITS: [&str; 6] = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"];
    let mut value = n as f64;
    let mut unit = 0;
    while value >= 1024.0 && unit + 1 < UNITS.len() {
        value /= 1024.0;
        unit += 1;
    }
    if unit == 0 {
        format!("{n} B")
    } else {
        format!("{value:.1} {}", UNITS[unit])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn significant_digits_at_every_scale() {
        assert_eq!(significant(0.0123456, 4), "0.01235");
        assert_eq!(significant(123.456, 4), "123.5");
        assert_eq!(significant(2.5e-6, 4), "2.500e-6");
        assert_eq!(significant(-3.0e9, 3), "-3.00e9");
        assert_eq!(significant(0.0, 4), "0");
        assert_eq!(significant(f64::INFINITY, 4), "inf");
        assert_eq!(significant(1.0, 4), "1.000");
    }

    #[test]
    fn bytes_in_words() {
        assert_eq!(bytes(512), "512 B");
        assert_eq!(bytes(1536), "1.5 KiB");
        assert_eq!(bytes(3 << 30), "3.0 GiB");
    }
}

//! `DataType` and `Device`: DLPack's plain structs with C's parsing and printing.
use crate::error::{check, Result};
use crate::sys;
use std::fmt;

/// A DLPack data type (`float32`, `int64`, ...).
///
/// ```
/// use ffikit::DataType;
/// let t: DataType = "float32".parse().unwrap();
/// assert_eq!((t.to_string(), t.itemsize()), ("float32".to_string(), 4));
/// assert_eq!(DataType::of::<i64>(), "int64".parse().unwrap());
/// ```
#[derive(Clone, Copy)]
#[repr(transparent)]
pub struct DataType(pub sys::DLDataType);

/// A DLPack device (`cpu:0`, `cuda:1`).
///
/// ```
/// use ffikit::Device;
/// let d: Device = "cuda:1".parse().unwrap();
/// assert_eq!((d.device_type(), d.device_id()), (2, 1));
/// assert_eq!(Device::cpu().to_string(), "cpu:0");
/// ```
#[derive(Clone, Copy)]
#[repr(transparent)]
pub struct Device(pub sys::DLDevice);

/// The Rust element types a tensor's slices may be viewed as.
///
/// # Safety
/// `CODE`/`BITS` must describe `Self` exactly, and every bit pattern must be a valid `Self`.
pub unsafe trait Scalar: Copy + 'static {
    /// DLPack type code (kDLInt 0, kDLUInt 1, kDLFloat 2, kDLBool 6).
    const CODE: u8;
    /// Bits per element.
    const BITS: u8;
}
macro_rules! scalar {
    ($($t:ty => $code:expr, $bits:expr);*) => {$(
        unsafe impl Scalar for $t { const CODE: u8 = $code; const BITS: u8 = $bits; }
    )*};
}
scalar!(i8 => 0, 8; i16 => 0, 16; i32 => 0, 32; i64 => 0, 64;
        u8 => 1, 8; u16 => 1, 16; u32 => 1, 32; u64 => 1, 64;
        f32 => 2, 32; f64 => 2, 64);

impl DataType {
    /// The dtype of a Rust scalar type.
    pub fn of<T: Scalar>() -> DataType {
        DataType(sys::DLDataType { code: T::CODE, bits: T::BITS, lanes: 1 })
    }
    /// Bytes per element.
    pub fn itemsize(&self) -> usize {
        (self.0.bits as usize * self.0.lanes as usize).div_ceil(8)
    }
}

impl PartialEq for DataType {
    fn eq(&self, o: &DataType) -> bool {
        self.0.code == o.0.code && self.0.bits == o.0.bits && self.0.lanes == o.0.lanes
    }
}
impl Eq for DataType {}


fn format_with(f: &mut fmt::Formatter<'_>, fill: impl Fn(*mut std::os::raw::c_char, usize) -> usize) -> fmt::Result {
    let mut buf = [0u8; 64];
    let n = fill(buf.as_mut_ptr().cast(), buf.len());
    f.write_str(std::str::from_utf8(&buf[..n.min(buf.len() - 1)]).unwrap_or("?"))
}


impl Device {
    /// `cpu:0`.
    pub fn cpu() -> Device {
        Device::new(sys::DLDeviceType_kDLCPU as i32, 0)
    }
    /// A device of DLPack type `device_type` (any code, including DLPack 1.1's) and id.
    pub fn new(device_type: i32, device_id: i32) -> Device {
        // SAFETY: ffk_device stores the code without going through a Rust enum.
        Device(unsafe { sys::ffk_device(device_type, device_id) })
    }
    /// The DLPack device type code.
    pub fn device_type(&self) -> i32 {
        // SAFETY: reads the code as an integer.
        unsafe { sys::ffk_device_type(self.0) }
    }
    /// The device id.
    pub fn device_id(&self) -> i32 {
        self.0.device_id
    }
}

impl PartialEq for Device {
    fn eq(&self, o: &Device) -> bool {
        self.device_type() == o.device_type() && self.device_id() == o.device_id()
    }
}
impl Eq for Device {}


/// `FromStr` through C's parser and `Display`/`Debug` through C's formatter.
macro_rules! parse_and_format {
    ($t:ident, $raw:ident, $parse:ident, $format:ident) => {
        impl std::str::FromStr for $t {
            type Err = crate::Error;
            fn from_str(s: &str) -> Result<$t> {
                let mut out = sys::$raw::default();
                // SAFETY: data/size describe s.
                check(unsafe { sys::$parse(s.as_ptr().cast(), s.len(), &mut out) })?;
                Ok($t(out))
            }
        }
        impl fmt::Display for $t {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                // SAFETY: the buffer and its capacity are passed together.
                format_with(f, |b, n| unsafe { sys::$format(self.0, b, n) })
            }
        }
        impl fmt::Debug for $t {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                fmt::Display::fmt(self, f)
            }
        }
    };
}
parse_and_format!(DataType, DLDataType, ffk_dtype_parse, ffk_dtype_format);
parse_and_format!(Device, DLDevice, ffk_device_parse, ffk_device_format);

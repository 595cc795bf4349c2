//! `ffikit::stream`: the current stream per (thread, device) and ordering across streams,
//! over ffikit/stream.h and the stream section of ffikit/dlpack.h. The same API as C's and
//! Python's (`ffikit.stream`), with TVM-FFI's names where it has them.
//!
//! Every ffikit operation on a device with streams (CUDA: the zeroing of new storage,
//! `fill`, `copy_from`, `contiguous`, the DLPack ordering) queues its work on the calling
//! thread's current stream for that device and returns without synchronising the host,
//! except a copy into host memory, which waits for that stream before returning. Setting
//! the stream a framework uses (a CUDA graph capture's, another library's side stream)
//! orders ffikit's work with that framework's.
//!
//! Invariants:
//! * A [`RawStream`] is a borrowed handle (a `cudaStream_t` on CUDA): ffikit never
//!   creates, retains or destroys one. Whoever made the stream keeps it alive while it
//!   is current anywhere and while work queued on it may still run.
//! * The table is per thread. A thread starts with every stream [`RawStream::DEFAULT`]
//!   (null: CUDA's legacy default stream), and what one thread sets no other thread sees.
//!   So a [`StreamGuard`], which restores the stream of the thread that made it, is
//!   neither `Send` nor `Sync`.
//! * A guard restores the stream that was current when it was made, when it is dropped,
//!   also while a panic unwinds. Guards that are dropped in the reverse order of their
//!   creation (the order scopes give) therefore bring back every earlier stream;
//!   [`with_stream`] gives that order by construction.
//! * Checks are C's: a bad device (`ValueError: cannot set a stream: unknown device type
//!   99`), a bad DLPack `stream` value, CUDA's errors. No rule is decided here.
//!
//! ```
//! use ffikit::stream::{self, RawStream};
//! use ffikit::Device;
//! let cuda: Device = "cuda:0".parse().unwrap();
//! assert_eq!(stream::current(cuda), RawStream::DEFAULT);
//! {
//!     let _guard = stream::use_raw_stream(cuda, RawStream::PER_THREAD).unwrap();
//!     assert_eq!(stream::current(cuda), RawStream::PER_THREAD);
//!     // ffikit's CUDA work on this thread now goes to the per-thread default stream.
//! }
//! assert_eq!(stream::current(cuda), RawStream::DEFAULT);
//! ```
use crate::error::{check, Error, Result};
use crate::object::ObjectType;
use crate::sys;
use crate::tensor::{DLPack, Tensor};
use crate::types::Device;
use std::ffi::c_void;
use std::fmt;
use std::marker::PhantomData;

/// A stream handle as ffikit keeps it: opaque, copied freely, never owned.
///
/// On CUDA devices it is a `cudaStream_t`; null ([`RawStream::DEFAULT`]) is the legacy
/// default stream, and CUDA's special handles are [`RawStream::LEGACY`] (1,
/// `cudaStreamLegacy`) and [`RawStream::PER_THREAD`] (2, `cudaStreamPerThread`). ffikit
/// never destroys a stream, and a handle's lifetime is its creator's business, which is
/// why [`RawStream::from_raw`] is `unsafe`: ffikit hands the handle to CUDA as it is.
///
/// `Send` and `Sync`: a handle is a value that any thread may pass to CUDA.
///
/// ```
/// use ffikit::stream::RawStream;
/// assert!(RawStream::DEFAULT.is_null());
/// assert_eq!(RawStream::default(), RawStream::DEFAULT);
/// assert_eq!(RawStream::PER_THREAD.as_ptr() as usize, 2);
/// assert_eq!(format!("{:?}", RawStream::LEGACY), "RawStream(0x1)");
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
#[repr(transparent)]
pub struct RawStream(*mut c_void);

// SAFETY: a stream handle is an opaque value; CUDA accepts it from any thread, and Rust
// never dereferences it.
unsafe impl Send for RawStream {}
// SAFETY: as for Send; a shared reference gives nothing but a copy of the value.
unsafe impl Sync for RawStream {}

impl RawStream {
    /// Null: the default stream (on CUDA the legacy default stream). What every thread
    /// starts with.
    pub const DEFAULT: RawStream = RawStream(std::ptr::null_mut());
    /// CUDA's `cudaStreamLegacy` (1): the legacy default stream, named explicitly.
    pub const LEGACY: RawStream = RawStream(1 as *mut c_void);
    /// CUDA's `cudaStreamPerThread` (2): the calling host thread's default stream.
    pub const PER_THREAD: RawStream = RawStream(2 as *mut c_void);

    /// A handle from its raw value (a `cudaStream_t`, or the integer a framework reports,
    /// such as torch's `Stream.cuda_stream`, cast to a pointer).
    ///
    /// # Safety
    /// `p` must be null, 1, 2, or a stream of the device it will be used with (set as
    /// current, or passed to [`order`]) that stays alive while it is current on any
    /// thread and until the work ffikit queued on it has finished. ffikit passes it to
    /// CUDA unchecked.
    pub const unsafe fn from_raw(p: *mut c_void) -> RawStream {
        RawStream(p)
    }

    /// The raw handle (borrowed: nothing is retained).
    pub fn as_ptr(self) -> *mut c_void {
        self.0
    }

    /// True for [`RawStream::DEFAULT`] (null).
    pub fn is_null(self) -> bool {
        self.0.is_null()
    }
}

impl Default for RawStream {
    /// [`RawStream::DEFAULT`].
    fn default() -> RawStream {
        RawStream::DEFAULT
    }
}

impl fmt::Debug for RawStream {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "RawStream({:#x})", self.0 as usize)
    }
}

impl From<RawStream> for *mut c_void {
    fn from(s: RawStream) -> *mut c_void {
        s.0
    }
}

/// The calling thread's current stream for `device`: [`RawStream::DEFAULT`] when none was
/// set (or the device is not one a stream can be set for). Cannot fail; takes no lock.
///
/// ```
/// let cpu = ffikit::Device::cpu();
/// assert!(ffikit::stream::current(cpu).is_null());
/// ```
pub fn current(device: Device) -> RawStream {
    // SAFETY: a plain lookup in the calling thread's table.
    RawStream(unsafe { sys::ffk_stream_get(device.device_type(), device.device_id()) })
}

/// [`current`], under TVM-FFI's Python name.
///
/// ```
/// let cuda = ffikit::Device::new(2, 0);
/// assert_eq!(ffikit::stream::get_raw_stream(cuda), ffikit::stream::current(cuda));
/// ```
pub fn get_raw_stream(device: Device) -> RawStream {
    current(device)
}

/// Makes `stream` the calling thread's current stream for `device` and returns the one it
/// replaces, for restoring it later ([`use_raw_stream`] does that for you).
/// [`RawStream::DEFAULT`] resets to the default.
///
/// Fails with a `ValueError` naming the bad value for a device type that is not a DLPack
/// one or a negative device id (nothing changes then), or a `MemoryError`.
///
/// ```
/// use ffikit::stream::{self, RawStream};
/// use ffikit::{Device, ErrorKind};
/// let cuda = Device::new(2, 1);
/// assert_eq!(stream::set(cuda, RawStream::PER_THREAD).unwrap(), RawStream::DEFAULT);
/// assert_eq!(stream::set(cuda, RawStream::DEFAULT).unwrap(), RawStream::PER_THREAD);
/// let e = stream::set(Device::new(99, 0), RawStream::LEGACY).unwrap_err();
/// assert_eq!(e.error_kind(), ErrorKind::Value);
/// ```
pub fn set(device: Device, stream: RawStream) -> Result<RawStream> {
    let mut previous = std::ptr::null_mut();
    // SAFETY: the stream is stored, not used; `previous` is a valid out pointer.
    check(unsafe { sys::ffk_stream_set(device.device_type(), device.device_id(), stream.0, &mut previous) })?;
    Ok(RawStream(previous))
}

/// Makes `stream` current for `device` on this thread until the returned guard is dropped,
/// which brings back the stream that was current before (also while a panic unwinds).
/// TVM-FFI's `use_raw_stream`. Fails as [`set`] does.
///
/// ```
/// use ffikit::stream::{self, RawStream};
/// let cuda = ffikit::Device::new(2, 0);
/// let outer = stream::use_raw_stream(cuda, RawStream::LEGACY).unwrap();
/// {
///     let inner = stream::use_raw_stream(cuda, RawStream::PER_THREAD).unwrap();
///     assert_eq!((inner.previous(), stream::current(cuda)), (RawStream::LEGACY, RawStream::PER_THREAD));
/// }
/// assert_eq!(stream::current(cuda), RawStream::LEGACY);
/// drop(outer);
/// assert_eq!(stream::current(cuda), RawStream::DEFAULT);
/// ```
pub fn use_raw_stream(device: Device, stream: RawStream) -> Result<StreamGuard> {
    let previous = set(device, stream)?;
    Ok(StreamGuard { device, stream, previous, _per_thread: PhantomData })
}

/// Runs `f` with `stream` current for `device` on this thread, then restores the previous
/// stream (also when `f` panics). Fails, without running `f`, as [`set`] does.
///
/// ```
/// use ffikit::stream::{self, RawStream};
/// let cuda = ffikit::Device::new(2, 0);
/// let seen = stream::with_stream(cuda, RawStream::PER_THREAD, || stream::current(cuda)).unwrap();
/// assert_eq!((seen, stream::current(cuda)), (RawStream::PER_THREAD, RawStream::DEFAULT));
/// ```
pub fn with_stream<R>(device: Device, stream: RawStream, f: impl FnOnce() -> R) -> Result<R> {
    let _guard = use_raw_stream(device, stream)?;
    Ok(f())
}

/// Restores the stream that was current for its device when it was made, on the thread
/// that made it, when dropped ([`use_raw_stream`]). Not `Send`: the table it restores is
/// that thread's. Dropping guards out of the order of their creation restores what each
/// one saw, so an earlier guard dropped first leaves a later guard's "previous" stream
/// current when that one goes; keep guards in nested scopes or use [`with_stream`].
/// `std::mem::forget` leaves the stream set, which is safe.
///
/// ```compile_fail
/// let cuda = ffikit::Device::new(2, 0);
/// let guard = ffikit::stream::use_raw_stream(cuda, ffikit::RawStream::PER_THREAD).unwrap();
/// std::thread::spawn(move || drop(guard)); // error: the guard is not Send
/// ```
#[must_use = "the previous stream comes back as soon as the guard is dropped"]
#[derive(Debug)]
pub struct StreamGuard {
    device: Device,
    stream: RawStream,
    previous: RawStream,
    /// `!Send + !Sync`: the stream table is per thread.
    _per_thread: PhantomData<*const ()>,
}

impl StreamGuard {
    /// The device whose stream it set.
    pub fn device(&self) -> Device {
        self.device
    }
    /// The stream it made current.
    pub fn stream(&self) -> RawStream {
        self.stream
    }
    /// The stream that comes back when it is dropped.
    pub fn previous(&self) -> RawStream {
        self.previous
    }
}

impl Drop for StreamGuard {
    fn drop(&mut self) {
        // SAFETY: `previous` came out of this thread's table. This cannot fail: the device
        // was accepted when the guard was made, and its entry exists or `previous` is the
        // default, which needs none (entries are never removed), so nothing is allocated.
        let rc = unsafe {
            sys::ffk_stream_set(self.device.device_type(), self.device.device_id(), self.previous.0, std::ptr::null_mut())
        };
        if rc != 0 {
            // Keep the thread's error slot clean; a drop has nobody to report to.
            drop(Error::fetch());
        }
    }
}

/// Makes the work queued so far on `producer` happen before any work queued later on
/// `consumer` (both streams of `device`): on CUDA an event recorded on the producer that
/// the consumer waits for, without synchronising the host, legal inside a CUDA graph
/// capture. Nothing to do when the two are the same stream or the device has no streams
/// ([`has_streams`]). Fails with a `RuntimeError` naming the device and CUDA's error (also
/// when ffikit was built without CUDA).
///
/// ```
/// use ffikit::stream::{self, RawStream};
/// stream::order(ffikit::Device::cpu(), RawStream::LEGACY, RawStream::PER_THREAD).unwrap();
/// stream::order(ffikit::Device::new(2, 0), RawStream::LEGACY, RawStream::LEGACY).unwrap();
/// ```
pub fn order(device: Device, producer: RawStream, consumer: RawStream) -> Result<()> {
    // SAFETY: the handles are valid for the device by RawStream's contract.
    check(unsafe { sys::ffk_stream_order(device.0, producer.0, consumer.0) })
}

/// True for the devices whose work runs on streams that ffikit orders (CUDA, CUDA managed).
///
/// ```
/// use ffikit::{stream, Device};
/// assert!(stream::has_streams(Device::new(2, 0)) && !stream::has_streams(Device::cpu()));
/// ```
pub fn has_streams(device: Device) -> bool {
    // SAFETY: reads the device's type code.
    unsafe { sys::ffk_device_has_streams(device.0) }
}

/// The consumer's side of a DLPack exchange: the `stream` value to pass to a producer's
/// `__dlpack__` for a tensor on `device`, so the producer orders its work before this
/// thread's current stream for that device. `Some(1)` for the legacy default stream,
/// `Some(handle)` for another stream, `None` (pass None) for a device without streams.
///
/// ```
/// use ffikit::stream::{self, RawStream};
/// use ffikit::Device;
/// let cuda = Device::new(2, 0);
/// assert_eq!((stream::dlpack_consumer_stream(Device::cpu()), stream::dlpack_consumer_stream(cuda)), (None, Some(1)));
/// let seen = stream::with_stream(cuda, RawStream::PER_THREAD, || stream::dlpack_consumer_stream(cuda)).unwrap();
/// assert_eq!(seen, Some(2));
/// ```
pub fn dlpack_consumer_stream(device: Device) -> Option<i64> {
    let mut out = 0i64;
    // SAFETY: `out` is a valid out pointer; cannot fail.
    unsafe { sys::ffk_dlpack_consumer_stream(device.0, &mut out) }.then_some(out)
}

impl Tensor {
    /// The producer's side of the array API standard's `__dlpack__(stream=...)`: checks
    /// the consumer's `stream` value (`None` for None) and makes ffikit's pending work on
    /// this tensor's device (this thread's current stream) visible on that stream, then
    /// exports as [`Tensor::to_dlpack`] does.
    ///
    /// For a device with streams: `None` means the legacy default stream, `-1` no
    /// synchronisation, `1` the legacy default stream, `2` the per-thread default stream,
    /// a value above 2 a stream handle; `0` and other negative values are a `ValueError`
    /// naming the value and the device. For any other device the value must be `None` or
    /// `-1`. Also fails as [`order`] does.
    ///
    /// ```
    /// let t = ffikit::Tensor::from_slice(&[1.0f32, 2.0], &[2]).unwrap();
    /// let m = t.to_dlpack_with_stream(None).unwrap();
    /// assert_eq!(m.dl_tensor().ndim, 1);
    /// let e = t.to_dlpack_with_stream(Some(5)).err().unwrap();
    /// assert_eq!(e.to_string(), "ValueError: stream must be None for a tensor on cpu, got 5");
    /// ```
    pub fn to_dlpack_with_stream(&self, stream: Option<i64>) -> Result<DLPack> {
        let t: *const sys::ffk_tensor = self.as_object().as_ptr().cast();
        // SAFETY: a live tensor; the stream value is checked by C before any use.
        check(unsafe { sys::ffk_tensor_dlpack_export_stream(t, stream.is_some(), stream.unwrap_or(0)) })?;
        self.to_dlpack()
    }
}

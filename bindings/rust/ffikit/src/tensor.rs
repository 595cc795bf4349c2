//! `Tensor`: n-dimensional views of typed memory over a Storage, with DLPack exchange.
//!
//! Metadata never changes after creation, so a `Tensor` is `Send + Sync`. The elements
//! are plain memory that views, clones, DLPack consumers and (for shared memory) other
//! processes may share, so Rust's borrow rules are kept like this:
//! * `as_slice` (`&self`) needs a dense host tensor of the right dtype whose memory is
//!   not shared-memory (another process could write it at any time);
//! * `as_mut_slice`, `fill` and `copy_from` (`&mut self`) also need an *exclusive*
//!   tensor: the only handle to the Tensor, the only Tensor over its Storage, and not
//!   imported through DLPack (whose producer still holds the memory).
//!
//! Rules about values are the C library's, as in every binding: a read-only tensor is
//! refused by C (`ffk_tensor_check_writable`, asked before any Rust write), dimension and
//! index ranges are checked there (negative ones count from the end), fill values must
//! fit the dtype (an `Overflow` error otherwise), and a shared-memory size is computed
//! there with overflow checks.
//!
//! Everything else goes through copies: `to_vec` and `write_from`.
use crate::any::Any;
use crate::error::{check, check_ptr, cstring, Error, Result};
use crate::object::{object_handle, ObjectRef};
use crate::sys;
use crate::types::{DataType, Device, Scalar};
use std::ffi::CStr;

object_handle!(
    /// A Tensor object.
    ///
    /// ```
    /// use ffikit::{DataType, Device, Tensor};
    /// let mut t = Tensor::from_slice(&[1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0], &[2, 3]).unwrap();
    /// assert_eq!(t.to_string(), "float32[2, 3]@cpu:0");
    /// t.as_mut_slice::<f32>().unwrap()[0] = 10.0;
    /// let col = t.transpose(0, 1).unwrap();            // a view over the same storage
    /// assert_eq!(col.shape(), &[3, 2]);
    /// assert_eq!(col.to_vec::<f32>().unwrap(), vec![10.0, 4.0, 2.0, 5.0, 3.0, 6.0]);
    /// assert!(col.as_slice::<f32>().is_err());        // not dense
    /// assert!(t.as_mut_slice::<f32>().is_err());      // the view shares the storage
    /// ```
    Tensor, FFK_TYPE_TENSOR, "Tensor"
);

fn err(kind: &str, msg: String) -> Error {
    Error::new(kind, &msg)
}

/// A shape's length as C's `ndim`, unnarrowed where it fits: C's shape rule
/// (`ffk_tensor_check_shape`) decides how many dimensions a tensor may have and names the
/// length it refuses. A slice longer than `i32::MAX` is passed as `i32::MAX`, which it
/// refuses all the same.
fn ndim(shape: &[i64]) -> i32 {
    i32::try_from(shape.len()).unwrap_or(i32::MAX)
}

impl Tensor {
    fn raw(&self) -> *mut sys::ffk_tensor {
        self.0.as_ptr().cast()
    }
    fn dl(&self) -> &sys::DLTensor {
        // SAFETY: the DLTensor lives inside the Tensor and never changes.
        unsafe { &*sys::ffk_tensor_dltensor_borrow(self.raw()) }
    }
    fn wrap(p: *mut sys::ffk_tensor) -> Result<Tensor> {
        check_ptr(p).map(Tensor)
    }

    /// A new contiguous tensor of zeros.
    ///
    /// ```
    /// use ffikit::{DataType, Device, Tensor};
    /// let t = Tensor::zeros(&[2, 2], DataType::of::<f64>(), Device::cpu()).unwrap();
    /// assert_eq!(t.as_slice::<f64>().unwrap(), &[0.0; 4]);
    /// ```
    pub fn zeros(shape: &[i64], dtype: DataType, device: Device) -> Result<Tensor> {
        // SAFETY: shape pointer and length go together.
        Tensor::wrap(unsafe { sys::ffk_tensor_zeros(ndim(shape), shape.as_ptr(), dtype.0, device.0) })
    }

    /// A new CPU tensor of `shape` holding a copy of `data`: a `ValueError` when the
    /// element counts differ, or from C's shape rule (a negative dimension, too many
    /// dimensions, elements or bytes that overflow 64 bits, each named).
    ///
    /// ```
    /// let e = ffikit::Tensor::from_slice(&[1.0f32], &[i64::MAX, 2]).unwrap_err();
    /// assert_eq!(e.to_string(), "ValueError: from_slice: shape [9223372036854775807, 2] has more elements than fit in 64 bits");
    /// ```
    pub fn from_slice<T: Scalar>(data: &[T], shape: &[i64]) -> Result<Tensor> {
        let mut n = 0i64;
        // SAFETY: shape pointer and length go together; C reads no dimension when the
        // length is out of range, and writes only `n`.
        check(unsafe {
            sys::ffk_tensor_check_shape(c"from_slice".as_ptr(), shape.len() as i64, shape.as_ptr(), std::ptr::null(),
                                        DataType::of::<T>().0, &mut n, std::ptr::null_mut())
        })?;
        if n as u64 != data.len() as u64 {
            return Err(err("ValueError", format!("from_slice: shape {:?} holds {} elements but the slice has {}", shape, n, data.len())));
        }
        // SAFETY: shape pointer and length go together (at most FFK_TENSOR_MAX_NDIM: checked above).
        let mut t = Tensor::wrap(unsafe {
            sys::ffk_tensor_empty(ndim(shape), shape.as_ptr(), DataType::of::<T>().0, Device::cpu().0)
        })?;
        if !data.is_empty() {
            t.as_mut_slice::<T>()?.copy_from_slice(data);
        }
        Ok(t)
    }

    /// Checks received bytes against the tensor they should hold, as a deserializer asks
    /// before wrapping them: `Ok` when `data` is exactly a contiguous (row-major) tensor of
    /// `shape` and `dtype` (at any address: ffikit's CPU loops read elements through
    /// unaligned-safe accesses, so a misaligned slice of a larger frame is fine). Otherwise
    /// C's ValueError, prefixed with `what` (the user's operation): the shape rule's (a
    /// negative dimension, too many dimensions, a size overflowing 64 bits) or a length
    /// that differs. The bytes are only measured, never read (C's `ffk_tensor_check_bytes`).
    ///
    /// ```
    /// use ffikit::{DataType, Tensor};
    /// let f32 = DataType::of::<f32>();
    /// Tensor::check_bytes("unpickle", &[2, 3], f32, &[0u8; 24]).unwrap();
    /// let e = Tensor::check_bytes("unpickle", &[2, 3], f32, &[0u8; 12]).unwrap_err();
    /// assert_eq!(e.to_string(), "ValueError: unpickle: the buffer has 12 bytes, but a float32 tensor of shape [2, 3] has 24");
    /// ```
    pub fn check_bytes(what: &str, shape: &[i64], dtype: DataType, data: &[u8]) -> Result<()> {
        let what = cstring(what)?;
        // SAFETY: shape pointer and length go together (C reads no dimension when the
        // length is out of range); data is only compared, never read.
        let rc = unsafe {
            sys::ffk_tensor_check_bytes(what.as_ptr(), ndim(shape), shape.as_ptr(), dtype.0, data.as_ptr().cast(), data.len() as u64)
        };
        if rc < 0 {
            return Err(Error::fetch());
        }
        Ok(())
    }

    /// A new zeroed CPU tensor in POSIX shared memory (`name` like "/my-tensor", or a
    /// made-up one), which another process attaches to with `attach_shared`.
    ///
    /// ```
    /// use ffikit::{DataType, Tensor};
    /// let mut a = Tensor::new_shared(None, &[2], DataType::of::<i32>()).unwrap();
    /// let b = Tensor::attach_shared(&a.shared_name().unwrap(), &[2], DataType::of::<i32>()).unwrap();
    /// a.write_from(&[7i32, 8]).unwrap();
    /// assert_eq!(b.to_vec::<i32>().unwrap(), vec![7, 8]);
    /// ```
    ///
    /// A name follows POSIX: it starts with '/' and has no other '/' (at most 200
    /// characters). The byte size is computed in C: a shape whose bytes overflow is a
    /// `ValueError` naming it.
    pub fn new_shared(name: Option<&str>, shape: &[i64], dtype: DataType) -> Result<Tensor> {
        let cname = name.map(cstring).transpose()?;
        let name_ptr = cname.as_ref().map_or(std::ptr::null(), |c| c.as_ptr());
        // SAFETY: shape pointer and length go together; a new reference or NULL.
        Tensor::wrap(unsafe { sys::ffk_tensor_new_shared(name_ptr, ndim(shape), shape.as_ptr(), dtype.0) })
    }

    /// Attaches to shared memory made by `new_shared` (here or in another process); a
    /// missing name is a `FileNotFoundError`.
    pub fn attach_shared(name: &str, shape: &[i64], dtype: DataType) -> Result<Tensor> {
        let cname = cstring(name)?;
        // SAFETY: a new Storage reference or NULL.
        let storage = check_ptr(unsafe { sys::ffk_storage_attach_shared(cname.as_ptr()) })?;
        Tensor::over(&storage, shape, dtype)
    }

    fn over(storage: &ObjectRef, shape: &[i64], dtype: DataType) -> Result<Tensor> {
        // SAFETY: the tensor takes its own reference to the storage.
        Tensor::wrap(unsafe { sys::ffk_tensor_from_storage(storage.as_ptr().cast(), ndim(shape), shape.as_ptr(), std::ptr::null(), 0, dtype.0) })
    }

    /// The shared-memory name of the storage, if it is shared memory.
    pub fn shared_name(&self) -> Option<String> {
        // SAFETY: borrowed storage and name.
        unsafe {
            let s = sys::ffk_tensor_storage_borrow(self.raw());
            if s.is_null() {
                return None;
            }
            let p = sys::ffk_storage_shared_name(s);
            (!p.is_null()).then(|| CStr::from_ptr(p).to_string_lossy().into_owned())
        }
    }

    /// The dimensions.
    pub fn shape(&self) -> &[i64] {
        let d = self.dl();
        if d.ndim == 0 {
            return &[];
        }
        // SAFETY: ndim dimensions inside the live Tensor.
        unsafe { std::slice::from_raw_parts(d.shape, d.ndim as usize) }
    }

    /// The strides, in elements.
    pub fn strides(&self) -> &[i64] {
        let d = self.dl();
        if d.ndim == 0 {
            return &[];
        }
        // SAFETY: strides are never NULL in an ffikit Tensor.
        unsafe { std::slice::from_raw_parts(d.strides, d.ndim as usize) }
    }

    /// The element type.
    pub fn dtype(&self) -> DataType {
        DataType(self.dl().dtype)
    }

    /// The device.
    pub fn device(&self) -> Device {
        Device(self.dl().device)
    }

    /// The number of elements.
    pub fn numel(&self) -> i64 {
        // SAFETY: valid handle.
        unsafe { sys::ffk_tensor_numel(self.raw()) }
    }

    /// True when row-major without gaps.
    pub fn is_contiguous(&self) -> bool {
        // SAFETY: valid handle.
        unsafe { sys::ffk_tensor_is_contiguous(self.raw()) }
    }

    /// True when a DLPack producer marked it read-only.
    pub fn is_read_only(&self) -> bool {
        // SAFETY: valid handle.
        unsafe { sys::ffk_tensor_is_read_only(self.raw()) }
    }

    /// The address of element [0, ..., 0] (for FFI; reading it is up to you).
    pub fn data_ptr(&self) -> *mut std::ffi::c_void {
        // SAFETY: valid handle.
        unsafe { sys::ffk_tensor_data_ptr(self.raw()) }
    }

    /// Whether the CPU addresses the memory: C's rule, `ffk_device_is_host`.
    fn host(&self) -> bool {
        // SAFETY: a pure function of the DLDevice value.
        unsafe { sys::ffk_device_is_host(self.dl().device) }
    }

    fn check_dense<T: Scalar>(&self) -> Result<()> {
        if self.dtype() != DataType::of::<T>() {
            return Err(err("TypeError", format!("tensor of {} viewed as {}", self.dtype(), DataType::of::<T>())));
        }
        if !self.host() {
            return Err(err("ValueError", format!("tensor on {} is not in host memory", self.device())));
        }
        if !self.is_contiguous() {
            return Err(err("ValueError", format!("tensor of shape {:?} with strides {:?} is not contiguous", self.shape(), self.strides())));
        }
        if self.shared_name().is_some() {
            return Err(err("ValueError", "shared-memory tensors can change under any borrow: use to_vec / write_from".into()));
        }
        Ok(())
    }

    /// C's rule first (a read-only tensor is refused, naming `operation`), then Rust's
    /// aliasing rule: a write needs the exclusive tensor.
    fn check_exclusive(&self, operation: &std::ffi::CStr) -> Result<()> {
        // SAFETY: valid handle and NUL-terminated operation name.
        check(unsafe { sys::ffk_tensor_check_writable(self.raw(), operation.as_ptr()) })?;
        // SAFETY: borrowed storage; counts are snapshots, but with &mut self on the only
        // handle nobody else can add a reference.
        let storage = unsafe { sys::ffk_tensor_storage_borrow(self.raw()) };
        let alone = self.0.is_unique() && !storage.is_null() && unsafe { sys::ffk_object_is_unique(storage.cast()) };
        if !alone {
            return Err(err("ValueError", "tensor memory is shared (other handles, views, a DLPack producer)".into()));
        }
        Ok(())
    }

    /// The elements, borrowed (dense host tensors of dtype `T`; see the module docs).
    pub fn as_slice<T: Scalar>(&self) -> Result<&[T]> {
        self.check_dense::<T>()?;
        let n = self.numel() as usize;
        if n == 0 {
            return Ok(&[]);
        }
        // SAFETY: n elements of T at the (aligned) data pointer; no Rust writer can exist
        // while &self is held (as_mut_slice/fill/copy_from need the exclusive tensor).
        Ok(unsafe { std::slice::from_raw_parts(self.data_ptr() as *const T, n) })
    }

    /// The elements, mutably (also needs the exclusive tensor; see the module docs).
    pub fn as_mut_slice<T: Scalar>(&mut self) -> Result<&mut [T]> {
        self.check_dense::<T>()?;
        self.check_exclusive(c"as_mut_slice")?;
        let n = self.numel() as usize;
        if n == 0 {
            return Ok(&mut []);
        }
        // SAFETY: as for as_slice, and nothing else references this memory.
        Ok(unsafe { std::slice::from_raw_parts_mut(self.data_ptr() as *mut T, n) })
    }

    /// A copy of the elements in row-major order (any strides, any device with a copy path).
    pub fn to_vec<T: Scalar>(&self) -> Result<Vec<T>> {
        if self.dtype() != DataType::of::<T>() {
            return Err(err("TypeError", format!("tensor of {} read as {}", self.dtype(), DataType::of::<T>())));
        }
        let mut out = Tensor::zeros(self.shape(), self.dtype(), Device::cpu())?;
        // SAFETY: same shape and dtype; `out` is ours alone.
        check(unsafe { sys::ffk_tensor_copy_from(out.raw(), self.raw()) })?;
        Ok(out.as_mut_slice::<T>()?.to_vec())
    }

    /// Copies `src` (same shape and dtype, any layout or device) into this exclusive tensor.
    ///
    /// ```
    /// let src = ffikit::Tensor::from_slice(&[1i32, 2, 3, 4], &[2, 2]).unwrap();
    /// let mut dst = ffikit::Tensor::from_slice(&[0i32; 4], &[2, 2]).unwrap();
    /// dst.copy_from(&src.transpose(0, 1).unwrap()).unwrap();
    /// assert_eq!(dst.as_slice::<i32>().unwrap(), &[1, 3, 2, 4]);
    /// ```
    pub fn copy_from(&mut self, src: &Tensor) -> Result<()> {
        self.check_exclusive(c"copy_from")?;
        // SAFETY: both valid; nothing in Rust borrows our memory.
        check(unsafe { sys::ffk_tensor_copy_from(self.raw(), src.raw()) })
    }

    /// Sets every element of this exclusive tensor to `value` (an int, float or bool).
    ///
    /// ```
    /// let mut t = ffikit::Tensor::from_slice(&[0.0f32; 3], &[3]).unwrap();
    /// t.fill(2.5).unwrap();
    /// assert_eq!(t.as_slice::<f32>().unwrap(), &[2.5; 3]);
    /// ```
    ///
    /// The value must fit the dtype (C decides): out of range is an `Overflow` error.
    ///
    /// ```
    /// let mut t = ffikit::Tensor::from_slice(&[0i32; 2], &[2]).unwrap();
    /// let e = t.fill(1i64 << 40).unwrap_err();
    /// assert_eq!(e.to_string(), "OverflowError: fill: 1099511627776 is out of range for int32");
    /// ```
    pub fn fill(&mut self, value: impl Into<Any>) -> Result<()> {
        self.check_exclusive(c"fill")?;
        let v = value.into();
        // SAFETY: as for copy_from.
        check(unsafe { sys::ffk_tensor_fill(self.raw(), v.as_raw()) })
    }

    /// Copies `data` (row-major, numel elements of `T`) into the tensor through C's copy,
    /// whatever its strides or device: the way to write shared memory, which other
    /// handles may see (no Rust slice of shared memory exists). Other tensors must be
    /// exclusive, as for `as_mut_slice`.
    pub fn write_from<T: Scalar>(&mut self, data: &[T]) -> Result<()> {
        if self.dtype() != DataType::of::<T>() {
            return Err(err("TypeError", format!("writing {} into a tensor of {}", DataType::of::<T>(), self.dtype())));
        }
        if self.shared_name().is_none() {
            self.check_exclusive(c"write_from")?;
        } else {
            // SAFETY: valid handle and NUL-terminated operation name.
            check(unsafe { sys::ffk_tensor_check_writable(self.raw(), c"write_from".as_ptr()) })?;
        }
        let src = Tensor::from_slice(data, self.shape())?;
        // SAFETY: same shape and dtype; no Rust borrow of this memory is alive (above).
        check(unsafe { sys::ffk_tensor_copy_from(self.raw(), src.raw()) })
    }

    /// Another shape over the same elements (one dimension may be -1).
    ///
    /// ```
    /// let t = ffikit::Tensor::from_slice(&[1u8, 2, 3, 4], &[4]).unwrap();
    /// assert_eq!(t.reshape(&[2, -1]).unwrap().shape(), &[2, 2]);
    /// ```
    pub fn reshape(&self, shape: &[i64]) -> Result<Tensor> {
        // SAFETY: a new reference or NULL.
        Tensor::wrap(unsafe { sys::ffk_tensor_reshape(self.raw(), ndim(shape), shape.as_ptr()) })
    }

    /// Elements start, start+step, ... below stop along `dim`.
    ///
    /// ```
    /// let t = ffikit::Tensor::from_slice(&[0i64, 1, 2, 3, 4], &[5]).unwrap();
    /// assert_eq!(t.slice(0, 1, 5, 2).unwrap().to_vec::<i64>().unwrap(), vec![1, 3]);
    /// ```
    pub fn slice(&self, dim: i32, start: i64, stop: i64, step: i64) -> Result<Tensor> {
        // SAFETY: a new reference or NULL.
        Tensor::wrap(unsafe { sys::ffk_tensor_slice(self.raw(), dim, start, stop, step) })
    }

    /// The sub-tensor at `index` along `dim`, without that dimension (`t[i]` is
    /// `select(0, i)`); negative `dim` and `index` count from the end.
    ///
    /// ```
    /// let t = ffikit::Tensor::from_slice(&[0i64, 1, 2, 3, 4, 5], &[2, 3]).unwrap();
    /// assert_eq!(t.select(1, -1).unwrap().to_vec::<i64>().unwrap(), vec![2, 5]);
    /// assert_eq!(t.select(0, 2).unwrap_err().to_string(), "IndexError: index 2 is out of range for dimension 0 of size 2");
    /// ```
    pub fn select(&self, dim: i32, index: i64) -> Result<Tensor> {
        // SAFETY: a new reference or NULL.
        Tensor::wrap(unsafe { sys::ffk_tensor_select(self.raw(), dim, index) })
    }

    /// The size of dimension `dim` (negative counts from the end).
    pub fn size(&self, dim: i32) -> Result<i64> {
        // SAFETY: valid handle.
        let n = unsafe { sys::ffk_tensor_size(self.raw(), dim) };
        if n < 0 {
            return Err(Error::fetch());
        }
        Ok(n)
    }

    /// The value of the only element (any device): an int, float or bool `Any`.
    ///
    /// ```
    /// let t = ffikit::Tensor::from_slice(&[2.5f32], &[1]).unwrap();
    /// assert_eq!(t.item().unwrap().view().to::<f64>().unwrap(), 2.5);
    /// ```
    pub fn item(&self) -> Result<Any> {
        let mut out = std::mem::MaybeUninit::<sys::ffk_any>::uninit();
        // SAFETY: item writes *out (None on failure) and returns a new reference in it.
        let rc = unsafe { sys::ffk_tensor_item(self.raw(), out.as_mut_ptr()) };
        // SAFETY: initialised by ffk_tensor_item in every case; owned.
        let v = unsafe { Any::from_raw(out.assume_init()) };
        check(rc).map(|_| v)
    }

    /// Dimensions reordered: result dim i is dim `perm[i]` (negative entries count from the
    /// end). C checks the count and the entries (ValueError, IndexError).
    pub fn permute(&self, perm: &[i64]) -> Result<Tensor> {
        let n = i32::try_from(perm.len()).unwrap_or(i32::MAX);
        // SAFETY: C reads `n` entries only when n is the tensor's ndim, and perm has n.
        Tensor::wrap(unsafe { sys::ffk_tensor_permute(self.raw(), n, perm.as_ptr()) })
    }

    /// Two dimensions swapped.
    pub fn transpose(&self, d0: i32, d1: i32) -> Result<Tensor> {
        // SAFETY: a new reference or NULL.
        Tensor::wrap(unsafe { sys::ffk_tensor_transpose(self.raw(), d0, d1) })
    }

    /// Without dimension `dim` (of size 1).
    pub fn squeeze(&self, dim: i32) -> Result<Tensor> {
        // SAFETY: a new reference or NULL.
        Tensor::wrap(unsafe { sys::ffk_tensor_squeeze(self.raw(), dim) })
    }

    /// With a new dimension of size 1 before `dim`.
    pub fn unsqueeze(&self, dim: i32) -> Result<Tensor> {
        // SAFETY: a new reference or NULL.
        Tensor::wrap(unsafe { sys::ffk_tensor_unsqueeze(self.raw(), dim) })
    }

    /// Itself when contiguous, else a contiguous copy.
    pub fn contiguous(&self) -> Result<Tensor> {
        // SAFETY: a new reference or NULL.
        Tensor::wrap(unsafe { sys::ffk_tensor_contiguous(self.raw()) })
    }

    /// True when both tensors' elements live in the same Storage.
    pub fn shares_storage(&self, other: &Tensor) -> bool {
        // SAFETY: borrowed storages.
        unsafe {
            let a = sys::ffk_tensor_storage_borrow(self.raw());
            !a.is_null() && a == sys::ffk_tensor_storage_borrow(other.raw())
        }
    }

    /// Exports as a `DLManagedTensorVersioned` (DLPack 1.1) that keeps this tensor alive.
    ///
    /// ```
    /// let t = ffikit::Tensor::from_slice(&[1.0f32], &[1]).unwrap();
    /// let m = t.to_dlpack().unwrap();
    /// assert_eq!((m.version(), m.dl_tensor().ndim), ((1, 1), 1));
    /// let back = ffikit::Tensor::from_dlpack(m).map_err(|(e, _)| e).unwrap();
    /// assert_eq!(back.data_ptr(), t.data_ptr());
    /// ```
    pub fn to_dlpack(&self) -> Result<DLPack> {
        // SAFETY: new memory the consumer frees through its deleter, or NULL.
        let p = unsafe { sys::ffk_tensor_to_dlpack_versioned(self.raw()) };
        if p.is_null() {
            return Err(Error::fetch());
        }
        Ok(DLPack(p))
    }

    /// Imports a DLPack 1.x managed tensor: on success the Tensor owns it (and calls its
    /// deleter when the last view is gone); on failure it is handed back untouched.
    pub fn from_dlpack(m: DLPack) -> std::result::Result<Tensor, (Error, DLPack)> {
        // SAFETY: a valid managed tensor; taken only on success.
        let p = unsafe { sys::ffk_tensor_from_dlpack_versioned(m.0, std::ptr::null()) };
        if p.is_null() {
            return Err((Error::fetch(), m));
        }
        std::mem::forget(m);
        Ok(Tensor(unsafe { ObjectRef::from_raw(p.cast()) }.unwrap()))
    }
}

/// An owned `DLManagedTensorVersioned`: `Drop` calls its deleter exactly once, unless it
/// was given away with `into_raw` or `Tensor::from_dlpack`.
pub struct DLPack(*mut sys::DLManagedTensorVersioned);

// SAFETY: a managed tensor may be handed to another thread (DLPack's consumers do so);
// its deleter runs once, wherever it is dropped.
unsafe impl Send for DLPack {}

impl DLPack {
    /// Takes over a producer's managed tensor.
    ///
    /// # Safety
    /// `p` must be a valid DLPack 1.x managed tensor that the caller owns.
    pub unsafe fn from_raw(p: *mut sys::DLManagedTensorVersioned) -> DLPack {
        DLPack(p)
    }
    /// Gives the managed tensor away (the receiver must call its deleter).
    pub fn into_raw(self) -> *mut sys::DLManagedTensorVersioned {
        let p = self.0;
        std::mem::forget(self);
        p
    }
    /// The described tensor.
    pub fn dl_tensor(&self) -> &sys::DLTensor {
        // SAFETY: valid while we own it.
        unsafe { &(*self.0).dl_tensor }
    }
    /// The DLPack flags (FFKRS_DLPACK_FLAG_BITMASK_*).
    pub fn flags(&self) -> u64 {
        // SAFETY: valid while we own it.
        unsafe { (*self.0).flags }
    }
    /// The (major, minor) DLPack version it was made against.
    pub fn version(&self) -> (u32, u32) {
        // SAFETY: valid while we own it.
        unsafe { ((*self.0).version.major, (*self.0).version.minor) }
    }
}

impl Drop for DLPack {
    fn drop(&mut self) {
        // SAFETY: we own it; the deleter runs once.
        unsafe {
            if let Some(d) = (*self.0).deleter {
                d(self.0)
            }
        }
    }
}

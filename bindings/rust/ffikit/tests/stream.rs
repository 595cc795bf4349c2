//! Streams: the current stream per (thread, device), guards that restore it (also on
//! panic), thread isolation, C's errors for bad devices and DLPack stream values, and
//! ordering. The tests that need a CUDA device check for one at run time and, without
//! one, say so on stderr and return (they then count as passed: libtest has no run-time
//! skip); `run.sh test` prints those lines.
//!
//! Each test uses its own device ids: with `--test-threads=1` (the valgrind stage) libtest
//! runs every test on one thread, whose stream table the tests would otherwise share.
mod common;
use common::live;
use ffikit::stream::{self, RawStream};
use ffikit::{DataType, Device, ErrorKind, Tensor};
use std::ffi::c_void;
use std::io::Write;
use std::sync::Mutex;

const CUDA: i32 = 2;
const CUDA_HOST: i32 = 3;
const CUDA_MANAGED: i32 = 13;

fn cuda(id: i32) -> Device {
    Device::new(CUDA, id)
}

/// A handle no CUDA call ever sees: the tests that use one never run device work while
/// it is current.
fn fake(v: usize) -> RawStream {
    // SAFETY: only stored in and read back from the table (see above).
    unsafe { RawStream::from_raw(v as *mut c_void) }
}

static LOCK: Mutex<()> = Mutex::new(());

/// Runs `f` alone and checks that it leaves no object alive (testing builds of the C
/// library count them; `run.sh valgrind` covers the others).
fn no_leaks(f: impl FnOnce()) {
    let _guard = LOCK.lock().unwrap_or_else(|p| p.into_inner());
    let before = live(-1);
    f();
    assert_eq!(live(-1), before, "objects left alive");
}

/// True when ffikit can allocate on cuda:0 (a CUDA build on a machine with a GPU).
fn gpu_present() -> bool {
    Tensor::zeros(&[1], DataType::of::<f32>(), cuda(0)).is_ok()
}

/// True when the test must stop for want of a GPU: then says so straight to stderr (past
/// libtest's capture), with the reason ffikit gives.
fn skip_without_gpu(test: &str) -> bool {
    match Tensor::zeros(&[1], DataType::of::<f32>(), cuda(0)) {
        Ok(_) => false,
        Err(e) => {
            let _ = writeln!(std::io::stderr(), "SKIPPED stream::{}: no CUDA device ({})", test, e);
            true
        }
    }
}

#[test]
fn every_stream_starts_as_the_default_on_every_thread() {
    let check = || {
        for d in [Device::cpu(), cuda(0), cuda(7), Device::new(CUDA_MANAGED, 1), Device::new(99, 0), Device::new(CUDA, -1)] {
            assert_eq!(stream::current(d), RawStream::DEFAULT, "{:?}", d);
            assert!(stream::get_raw_stream(d).is_null());
        }
    };
    std::thread::spawn(check).join().unwrap();
    check();
}

#[test]
fn set_returns_the_previous_stream_and_get_sees_the_new_one() {
    no_leaks(|| {
        let (d, other) = (cuda(10), cuda(11));
        assert_eq!(stream::set(d, fake(0x1000)).unwrap(), RawStream::DEFAULT);
        assert_eq!(stream::current(d), fake(0x1000));
        assert_eq!(stream::current(other), RawStream::DEFAULT, "another device id is another entry");
        assert_eq!(stream::current(Device::new(CUDA_MANAGED, 10)), RawStream::DEFAULT, "another device type too");
        assert_eq!(stream::set(d, RawStream::PER_THREAD).unwrap(), fake(0x1000));
        assert_eq!(stream::set(d, RawStream::DEFAULT).unwrap(), RawStream::PER_THREAD);
        assert_eq!(stream::current(d), RawStream::DEFAULT);
        // Setting the default where nothing was set is a no-op that reports the default.
        assert_eq!(stream::set(other, RawStream::DEFAULT).unwrap(), RawStream::DEFAULT);
        // Every device type takes a stream; only CUDA's use it.
        assert_eq!(stream::set(Device::cpu(), RawStream::LEGACY).unwrap(), RawStream::DEFAULT);
        assert_eq!(stream::set(Device::cpu(), RawStream::DEFAULT).unwrap(), RawStream::LEGACY);
    });
}

#[test]
fn many_devices_on_one_thread_keep_their_own_streams() {
    // More devices than the C table keeps without allocating (8), so it grows twice.
    let ids = 20..60;
    for id in ids.clone() {
        assert_eq!(stream::set(cuda(id), fake(0x10000 + id as usize)).unwrap(), RawStream::DEFAULT);
    }
    for id in ids.clone() {
        assert_eq!(stream::current(cuda(id)), fake(0x10000 + id as usize), "cuda:{}", id);
    }
    for id in ids {
        assert_eq!(stream::set(cuda(id), RawStream::DEFAULT).unwrap(), fake(0x10000 + id as usize));
    }
}

#[test]
fn a_guard_restores_the_previous_stream_and_guards_nest() {
    no_leaks(|| {
        let (d, other) = (cuda(60), cuda(61));
        {
            let outer = stream::use_raw_stream(d, fake(0xa0)).unwrap();
            assert_eq!((outer.device(), outer.stream(), outer.previous()), (d, fake(0xa0), RawStream::DEFAULT));
            {
                let inner = stream::use_raw_stream(d, fake(0xb0)).unwrap();
                assert_eq!(inner.previous(), fake(0xa0));
                let elsewhere = stream::use_raw_stream(other, fake(0xc0)).unwrap();
                assert_eq!((stream::current(d), stream::current(other)), (fake(0xb0), fake(0xc0)));
                {
                    let again = stream::use_raw_stream(d, fake(0xb0)).unwrap(); // the same stream twice
                    assert_eq!(again.previous(), fake(0xb0));
                }
                assert_eq!(stream::current(d), fake(0xb0));
                drop(elsewhere);
                assert_eq!(stream::current(other), RawStream::DEFAULT);
            }
            assert_eq!(stream::current(d), fake(0xa0));
            let reset = stream::use_raw_stream(d, RawStream::DEFAULT).unwrap();
            assert_eq!((stream::current(d), reset.previous()), (RawStream::DEFAULT, fake(0xa0)));
            drop(reset);
            assert_eq!(stream::current(d), fake(0xa0));
        }
        assert_eq!(stream::current(d), RawStream::DEFAULT);
        // A guard that sets the default on a device never set (C keeps no entry for it)
        // still restores the default after an inner guard made one.
        let fresh = cuda(66);
        let outer = stream::use_raw_stream(fresh, RawStream::DEFAULT).unwrap();
        let inner = stream::use_raw_stream(fresh, fake(0xf0)).unwrap();
        assert_eq!((outer.previous(), inner.previous()), (RawStream::DEFAULT, RawStream::DEFAULT));
        drop(inner);
        assert_eq!(stream::current(fresh), RawStream::DEFAULT);
        drop(outer);
        assert_eq!(stream::current(fresh), RawStream::DEFAULT);
        // with_stream: the value of the closure, and the stream it ran under.
        let seen = stream::with_stream(d, fake(0xd0), || stream::with_stream(d, fake(0xe0), || stream::current(d)).unwrap());
        assert_eq!((seen.unwrap(), stream::current(d)), (fake(0xe0), RawStream::DEFAULT));
    });
}

#[test]
fn guards_dropped_out_of_order_restore_what_each_one_saw() {
    let d = cuda(62);
    let first = stream::use_raw_stream(d, fake(0x1)).unwrap();
    let second = stream::use_raw_stream(d, fake(0x2)).unwrap();
    drop(first); // restores the default, under `second`
    assert_eq!(stream::current(d), RawStream::DEFAULT);
    drop(second); // restores what it replaced: `first`'s stream
    assert_eq!(stream::current(d), fake(0x1));
    stream::set(d, RawStream::DEFAULT).unwrap();
    // A forgotten guard leaves its stream current.
    std::mem::forget(stream::use_raw_stream(d, fake(0x3)).unwrap());
    assert_eq!(stream::set(d, RawStream::DEFAULT).unwrap(), fake(0x3));
}

#[test]
fn a_panic_restores_the_stream_through_the_guard() {
    no_leaks(|| {
        let d = cuda(63);
        let _outer = stream::use_raw_stream(d, fake(0x70)).unwrap();
        let r = std::panic::catch_unwind(|| {
            let _g = stream::use_raw_stream(d, fake(0x71)).unwrap();
            let _h = stream::use_raw_stream(d, fake(0x72)).unwrap();
            assert_eq!(stream::current(d), fake(0x72));
            panic!("inside the guards");
        });
        assert!(r.is_err());
        assert_eq!(stream::current(d), fake(0x70));
        let r = std::panic::catch_unwind(|| {
            stream::with_stream(d, fake(0x73), || -> () { panic!("inside with_stream") }).unwrap();
        });
        assert_eq!(*r.unwrap_err().downcast::<&str>().unwrap(), "inside with_stream");
        assert_eq!(stream::current(d), fake(0x70));
    });
}

#[test]
fn threads_never_see_each_others_streams() {
    let d = cuda(64);
    let _mine = stream::use_raw_stream(d, fake(0x5000)).unwrap();
    let handles: Vec<_> = (0..8usize)
        .map(|i| {
            std::thread::spawn(move || {
                assert_eq!(stream::current(d), RawStream::DEFAULT, "a new thread starts with the default");
                for round in 0..200 {
                    let s = fake(0x6000 + i * 0x100 + round % 7);
                    let g = stream::use_raw_stream(d, s).unwrap();
                    assert_eq!(stream::current(d), s);
                    // Devices past the table's fixed part allocate on this thread alone.
                    let _extra: Vec<_> = (100..110).map(|id| stream::use_raw_stream(cuda(id), s).unwrap()).collect();
                    std::thread::yield_now();
                    assert_eq!(stream::current(d), s, "another thread's set leaked into this one");
                    drop(g);
                }
                assert_eq!(stream::current(d), RawStream::DEFAULT);
                // The guard is !Send, its stream is Send: a handle crosses threads as a value.
                stream::current(d)
            })
        })
        .collect();
    for h in handles {
        assert_eq!(h.join().unwrap(), RawStream::DEFAULT);
    }
    assert_eq!(stream::current(d), fake(0x5000), "the threads' sets did not reach this thread");
}

#[test]
fn a_bad_device_is_a_value_error_that_changes_nothing() {
    no_leaks(|| {
        let e = stream::set(Device::new(99, 0), RawStream::LEGACY).unwrap_err();
        assert_eq!(e.error_kind(), ErrorKind::Value);
        assert_eq!(e.message(), "cannot set a stream: unknown device type 99");
        let e = stream::use_raw_stream(Device::new(CUDA, -1), RawStream::LEGACY).unwrap_err();
        assert_eq!(e.to_string(), "ValueError: cannot set a stream: device id -1 is negative");
        let mut ran = false;
        let e = stream::with_stream(Device::new(-3, 0), RawStream::LEGACY, || ran = true).unwrap_err();
        assert_eq!(e.message(), "cannot set a stream: unknown device type -3");
        assert!(!ran, "with_stream ran its closure after failing to set the stream");
        assert_eq!(stream::current(Device::new(99, 0)), RawStream::DEFAULT);
        assert_eq!(stream::current(Device::new(CUDA, -1)), RawStream::DEFAULT);
    });
}

#[test]
fn device_types_with_streams_are_cudas() {
    assert!(stream::has_streams(cuda(0)) && stream::has_streams(Device::new(CUDA_MANAGED, 3)));
    for t in [1, CUDA_HOST, 4, 8, 18, 99] {
        assert!(!stream::has_streams(Device::new(t, 0)), "device type {}", t);
    }
}

#[test]
fn order_is_a_no_op_without_streams_or_between_a_stream_and_itself() {
    no_leaks(|| {
        stream::order(Device::cpu(), fake(0x10), fake(0x20)).unwrap();
        stream::order(Device::new(CUDA_HOST, 0), RawStream::LEGACY, RawStream::PER_THREAD).unwrap();
        stream::order(cuda(0), fake(0x30), fake(0x30)).unwrap();
        stream::order(cuda(0), RawStream::DEFAULT, RawStream::DEFAULT).unwrap();
    });
}

#[test]
fn order_between_two_cuda_streams_needs_a_device() {
    no_leaks(|| {
        match stream::order(cuda(0), RawStream::LEGACY, RawStream::PER_THREAD) {
            Ok(()) => assert!(gpu_present()),
            Err(e) => {
                assert_eq!(e.error_kind(), ErrorKind::Runtime, "{}", e);
                assert!(e.message().starts_with("cannot order streams on device `cuda:0`"), "{}", e);
                assert!(!gpu_present(), "a GPU is there: {}", e);
            }
        }
    });
}

#[test]
fn the_dlpack_consumer_stream_is_the_current_one() {
    let d = cuda(65);
    assert_eq!(stream::dlpack_consumer_stream(Device::cpu()), None);
    assert_eq!(stream::dlpack_consumer_stream(Device::new(CUDA_HOST, 0)), None);
    assert_eq!(stream::dlpack_consumer_stream(d), Some(1), "the legacy default stream is 1, never 0");
    for (s, v) in [(RawStream::LEGACY, 1), (RawStream::PER_THREAD, 2), (fake(0x7f00_0000_1230), 0x7f00_0000_1230)] {
        let got = stream::with_stream(d, s, || stream::dlpack_consumer_stream(d)).unwrap();
        assert_eq!(got, Some(v), "{:?}", s);
    }
    let _cpu = stream::use_raw_stream(Device::cpu(), RawStream::PER_THREAD).unwrap();
    assert_eq!(stream::dlpack_consumer_stream(Device::cpu()), None, "a cpu stream is never passed");
}

#[test]
fn exporting_a_cpu_tensor_takes_only_none_or_minus_one() {
    no_leaks(|| {
        let t = Tensor::from_slice(&[1i32, 2, 3], &[3]).unwrap();
        for ok in [None, Some(-1)] {
            let m = t.to_dlpack_with_stream(ok).unwrap();
            assert_eq!(m.dl_tensor().data, t.data_ptr());
        }
        for bad in [0i64, 1, 2, 5, -2, i64::MAX] {
            let e = t.to_dlpack_with_stream(Some(bad)).err().expect("refused");
            assert_eq!(e.to_string(), format!("ValueError: stream must be None for a tensor on cpu, got {}", bad));
        }
    });
}

/// The memory a fake CUDA import describes: host memory nothing reads, labelled cuda:0.
struct FakeCuda {
    shape: [i64; 1],
    data: [f32; 4],
}

unsafe extern "C" fn free_fake(m: *mut ffikit::sys::DLManagedTensorVersioned) {
    // SAFETY: made by Box::into_raw below, with the FakeCuda as its manager context.
    unsafe {
        drop(Box::from_raw((*m).manager_ctx.cast::<FakeCuda>()));
        drop(Box::from_raw(m));
    }
}

/// A Tensor that claims to live on cuda:0 (its bytes are host memory that no test reads),
/// so the export checks for a device with streams run without a GPU.
fn fake_cuda_tensor() -> Tensor {
    use ffikit::sys;
    let ctx = Box::into_raw(Box::new(FakeCuda { shape: [4], data: [0.0; 4] }));
    // SAFETY: ctx is live until free_fake; the DLTensor points into it.
    let m = unsafe {
        let mut m: sys::DLManagedTensorVersioned = std::mem::zeroed();
        m.version = sys::DLPackVersion { major: 1, minor: 1 };
        m.manager_ctx = ctx.cast();
        m.deleter = Some(free_fake);
        m.dl_tensor.data = (*ctx).data.as_mut_ptr().cast();
        m.dl_tensor.device = sys::ffk_device(CUDA, 0);
        m.dl_tensor.ndim = 1;
        m.dl_tensor.dtype = DataType::of::<f32>().0;
        m.dl_tensor.shape = (*ctx).shape.as_mut_ptr();
        Box::into_raw(Box::new(m))
    };
    // SAFETY: a valid managed tensor we own.
    let t = Tensor::from_dlpack(unsafe { ffikit::DLPack::from_raw(m) }).map_err(|(e, _)| e).unwrap();
    assert_eq!(t.device(), cuda(0));
    t
}

#[test]
fn exporting_a_cuda_tensor_checks_the_stream_value_in_c() {
    no_leaks(|| {
        let t = fake_cuda_tensor();
        let e = t.to_dlpack_with_stream(Some(0)).err().expect("refused");
        assert_eq!(e.error_kind(), ErrorKind::Value);
        assert!(e.message().starts_with("stream 0 is not a valid DLPack stream for a tensor on `cuda:0` (0 is ambiguous"), "{}", e);
        let e = t.to_dlpack_with_stream(Some(-7)).err().expect("refused");
        assert!(e.message().starts_with("stream -7 is not a valid DLPack stream for a tensor on `cuda:0`"), "{}", e);
        // No ordering to do: -1 (the consumer asked for none), and None or 1 (the legacy
        // default stream) while ffikit's current stream is the default.
        for ok in [Some(-1), None, Some(1)] {
            let m = t.to_dlpack_with_stream(ok).unwrap();
            assert_eq!(ffikit::Device(m.dl_tensor().device), cuda(0));
        }
        // cudaStreamLegacy as ffikit's current stream is the default stream too.
        let g = stream::use_raw_stream(cuda(0), RawStream::LEGACY).unwrap();
        t.to_dlpack_with_stream(None).unwrap();
        drop(g);
        // Another stream needs an event: a RuntimeError from CUDA without a device.
        match t.to_dlpack_with_stream(Some(2)) {
            Ok(_) => assert!(gpu_present()),
            Err(e) => {
                assert!(e.message().starts_with("cannot order streams on device `cuda:0`"), "{}", e);
                assert!(!gpu_present(), "a GPU is there: {}", e);
            }
        }
    });
}

/// CUDA's runtime, reached through the dynamic loader (this crate has no CUDA bindings).
/// A stream is the driver's, so one made by this copy of the runtime is a stream of the
/// same device to the copy ffikit links (statically or not).
struct Cudart {
    create: CreateFn,
    synchronize: StreamFn,
    destroy: StreamFn,
}
type CreateFn = unsafe extern "C" fn(*mut *mut c_void, u32) -> i32;
type StreamFn = unsafe extern "C" fn(*mut c_void) -> i32;

impl Cudart {
    fn load() -> Option<Cudart> {
        extern "C" {
            fn dlopen(name: *const std::ffi::c_char, flags: i32) -> *mut c_void;
            fn dlsym(handle: *mut c_void, name: *const std::ffi::c_char) -> *mut c_void;
        }
        const RTLD_NOW: i32 = 2;
        // SAFETY: NUL-terminated names; each symbol is cast to its documented C signature
        // (cudaStreamCreateWithFlags, cudaStreamSynchronize, cudaStreamDestroy).
        unsafe {
            let mut h = dlopen(c"libcudart.so.13".as_ptr(), RTLD_NOW);
            if h.is_null() {
                h = dlopen(c"libcudart.so".as_ptr(), RTLD_NOW);
            }
            if h.is_null() {
                return None;
            }
            let sym = |name: &std::ffi::CStr| {
                let p = dlsym(h, name.as_ptr());
                assert!(!p.is_null(), "libcudart.so.13 has no {:?}", name);
                p
            };
            Some(Cudart {
                create: std::mem::transmute::<*mut c_void, CreateFn>(sym(c"cudaStreamCreateWithFlags")),
                synchronize: std::mem::transmute::<*mut c_void, StreamFn>(sym(c"cudaStreamSynchronize")),
                destroy: std::mem::transmute::<*mut c_void, StreamFn>(sym(c"cudaStreamDestroy")),
            })
        }
    }
}

#[test]
fn cuda_work_runs_on_a_created_stream_and_is_ordered_back() {
    if skip_without_gpu("cuda_work_runs_on_a_created_stream_and_is_ordered_back") {
        return;
    }
    let Some(rt) = Cudart::load() else {
        let _ = writeln!(
            std::io::stderr(),
            "SKIPPED stream::cuda_work_runs_on_a_created_stream_and_is_ordered_back: no libcudart.so.13 or \
             libcudart.so to make a stream with (add the CUDA toolkit's lib directory to LD_LIBRARY_PATH)"
        );
        return;
    };
    let mut raw = std::ptr::null_mut();
    const NON_BLOCKING: u32 = 1; // cudaStreamNonBlocking: no implicit sync with the legacy stream
    // SAFETY: a valid out pointer.
    assert_eq!(unsafe { (rt.create)(&mut raw, NON_BLOCKING) }, 0);
    // SAFETY: a stream of cuda:0, alive until the destroy below, after every use.
    let s = unsafe { RawStream::from_raw(raw) };
    no_leaks(|| {
        let d = cuda(0);
        let n = 1 << 20;
        let t = stream::with_stream(d, s, || {
            let mut t = Tensor::zeros(&[n], DataType::of::<f32>(), d).unwrap();
            t.fill(1.5f64).unwrap();
            // A copy to the host waits for the current stream (`s`) before returning.
            assert!(t.to_vec::<f32>().unwrap().iter().all(|&x| x == 1.5));
            let mut t2 = Tensor::zeros(&[n], DataType::of::<f32>(), d).unwrap();
            t2.fill(2.5f64).unwrap();
            t2
        })
        .unwrap();
        // The fill was queued on `s`: order it before the default stream, then read there.
        stream::order(d, s, RawStream::DEFAULT).unwrap();
        assert!(t.to_vec::<f32>().unwrap().iter().all(|&x| x == 2.5));
        // The producer's side with a handle as the consumer's stream, and the reverse.
        let _g = stream::use_raw_stream(d, RawStream::PER_THREAD).unwrap();
        drop(t.to_dlpack_with_stream(Some(raw as i64)).unwrap());
        stream::order(d, s, RawStream::PER_THREAD).unwrap();
        assert_eq!(stream::dlpack_consumer_stream(d), Some(2));
    });
    // SAFETY: nothing uses the stream after this.
    unsafe {
        assert_eq!((rt.synchronize)(raw), 0);
        assert_eq!((rt.destroy)(raw), 0);
    }
}

#[test]
fn stream_handles_are_send_and_sync_values() {
    fn send_sync<T: Send + Sync + Copy>() {}
    send_sync::<RawStream>();
    let s = fake(0x42);
    assert_eq!(std::thread::spawn(move || s).join().unwrap(), s);
    let p: *mut c_void = s.into();
    assert_eq!((p as usize, s.as_ptr() as usize), (0x42, 0x42));
    assert_eq!(format!("{:?}", RawStream::DEFAULT), "RawStream(0x0)");
}

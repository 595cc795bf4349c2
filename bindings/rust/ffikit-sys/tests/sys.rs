//! The raw layer: the shimmed static-inline helpers, the restored UINT64_C constants,
//! variadic calls, the thread-local error slot, and reflect.h's constants and storage
//! rule. (Layout tests are bindgen's own.)
use ffikit_sys as sys;
use std::ffi::CStr;

#[test]
fn inline_helpers_and_the_any_union() {
    unsafe {
        let v = sys::ffk_any_int(-5);
        assert_eq!(v.type_index, sys::ffk_type_index::FFK_TYPE_INT.0 as i32);
        assert_eq!(v.__bindgen_anon_1.v_int, -5);
        let d = sys::ffk_any_device(sys::ffk_device(sys::FFK_DEVICE_TRN as i32, 3)); // past DLPack 0.6's enum
        assert_eq!(sys::ffk_device_type(d.__bindgen_anon_1.v_device), 18);
        assert_eq!(sys::ffk_dtype_itemsize(sys::ffk_dtype(sys::FFK_DTYPE_FLOAT as u8, 32, 4)), 16);
        let a = sys::ffk_array_new(std::ptr::null(), 0);
        assert_eq!((sys::ffk_array_size(a), (*a).size), (0, 0));
        sys::ffk_object_release(a.cast());
    }
}

#[test]
fn uint64_constants_are_restored() {
    assert_eq!(sys::FFKRS_REFCOUNT_STRONG_ONE, 1);
    assert_eq!(sys::FFKRS_REFCOUNT_WEAK_ONE, 1u64 << 32);
    assert_eq!(sys::FFKRS_REFCOUNT_INIT, (1u64 << 32) | 1);
    assert_eq!(sys::FFKRS_DLPACK_FLAG_BITMASK_READ_ONLY, 1);
    assert_eq!(sys::FFKRS_DLPACK_FLAG_BITMASK_IS_COPIED, 2);
    assert_eq!(unsafe { sys::ffk_abi_version() }, sys::FFK_ABI_VERSION);
}

#[test]
fn variadic_calls_work_from_rust() {
    unsafe {
        let tup = sys::ffk_tuple_pack(2, sys::ffk_any_int(1), sys::ffk_any_float(2.5));
        let mut out = sys::ffk_any_none();
        assert_eq!((sys::ffk_tuple_size(tup), sys::ffk_tuple_get(tup, 1, &mut out)), (2, 0));
        assert_eq!(out.__bindgen_anon_1.v_float, 2.5);
        sys::ffk_object_release(tup.cast());

        let rc = sys::ffk_error_set(sys::FFK_ERR_VALUE.as_ptr().cast(), c"%s %d".as_ptr(), c"bad value".as_ptr(), 42i32);
        assert_eq!(rc, -1);
        assert!(sys::ffk_error_matches(sys::FFK_ERR_VALUE.as_ptr().cast()));
        let err = sys::ffk_error_fetch();
        assert_eq!(CStr::from_ptr(sys::ffk_error_message(err)).to_str().unwrap(), "bad value 42");
        assert!(!sys::ffk_error_occurred());
        sys::ffk_object_release(err.cast());
    }
}

#[test]
fn reflection_constants_and_storage_rule() {
    assert_eq!(
        [sys::FFK_FIELD_WRITABLE, sys::FFK_FIELD_HAS_DEFAULT, sys::FFK_FIELD_INIT_OFF, sys::FFK_FIELD_KW_ONLY],
        [1, 2, 4, 8]
    );
    assert_eq!([sys::FFK_FIELD_REPR_OFF, sys::FFK_FIELD_COMPARE_OFF, sys::FFK_FIELD_DEFAULT_FACTORY], [16, 32, 64]);
    use sys::ffk_field_storage as s;
    for (text, storage) in [
        (c"int", s::FFK_FIELD_STORAGE_INT),
        (c"float", s::FFK_FIELD_STORAGE_FLOAT),
        (c"bool", s::FFK_FIELD_STORAGE_BOOL),
        (c"str", s::FFK_FIELD_STORAGE_OBJECT),
        (c"Optional<Array<int>>", s::FFK_FIELD_STORAGE_OBJECT),
        (c"Any", s::FFK_FIELD_STORAGE_ANY),
        (c"Optional<int>", s::FFK_FIELD_STORAGE_ANY),
        (c"Device", s::FFK_FIELD_STORAGE_ANY),
    ] {
        assert_eq!(unsafe { sys::ffk_field_storage_for(text.as_ptr()) }, storage.0 as i32, "{:?}", text);
    }
    unsafe {
        assert_eq!(sys::ffk_field_storage_for(c"Array<".as_ptr()), -1);
        assert!(sys::ffk_error_matches(sys::FFK_ERR_VALUE.as_ptr().cast()));
        sys::ffk_error_clear();
    }
}

#[test]
fn part_two_headers_are_bound() {
    // reflect.h's hook names, access_path.h's kinds (tvm_ffi's AccessKind values).
    assert_eq!(&sys::FFK_ATTR_S_EQUAL[..], b"__s_equal__\0");
    assert_eq!(&sys::FFK_ATTR_S_HASH[..], b"__s_hash__\0");
    assert_eq!(&sys::FFK_ATTR_DATA_TO_JSON[..], b"__data_to_json__\0");
    assert_eq!(&sys::FFK_ATTR_DATA_FROM_JSON[..], b"__data_from_json__\0");
    use sys::ffk_access_kind as k;
    assert_eq!(
        [k::FFK_ACCESS_ATTR.0, k::FFK_ACCESS_ARRAY_ITEM.0, k::FFK_ACCESS_MAP_ITEM.0],
        [0, 1, 2]
    );
    assert_eq!(
        [k::FFK_ACCESS_ATTR_MISSING.0, k::FFK_ACCESS_ARRAY_ITEM_MISSING.0, k::FFK_ACCESS_MAP_ITEM_MISSING.0],
        [3, 4, 5]
    );
    assert_eq!(sys::FFK_STRUCTURAL_MAX_DEPTH, 1000);
    unsafe {
        // An access path, extended and queried through the raw calls.
        let root = sys::ffk_access_path_root();
        assert!(!root.is_null());
        let path = sys::ffk_access_path_extend(root, k::FFK_ACCESS_ARRAY_ITEM.0 as i32, &sys::ffk_any_int(3));
        assert!(!path.is_null());
        assert_eq!((sys::ffk_access_path_depth(root), sys::ffk_access_path_depth(path)), (0, 1));
        assert_eq!(sys::ffk_access_path_parent(path), root as *const _);
        let (mut kind, mut key) = (-1, sys::ffk_any_none());
        assert_eq!(sys::ffk_access_path_last_step(path, &mut kind, &mut key), 1);
        assert_eq!((kind, key.__bindgen_anon_1.v_int), (1, 3));
        assert_eq!(sys::ffk_access_path_is_prefix_of(root, path), 1);
        assert!((*path).type_index == sys::ffk_access_path_type_index());
        // A bad kind is C's ValueError, not a crash.
        assert!(sys::ffk_access_path_extend(root, 99, &sys::ffk_any_int(0)).is_null());
        assert!(sys::ffk_error_matches(sys::FFK_ERR_VALUE.as_ptr().cast()));
        sys::ffk_error_clear();
        sys::ffk_object_release(path);
        sys::ffk_object_release(root);

        // The JSON graph of an int, written and read.
        let mut text = sys::ffk_any_none();
        assert_eq!(sys::ffk_to_json_graph(&sys::ffk_any_int(42), std::ptr::null(), &mut text), 0);
        let (mut data, mut size) = (std::ptr::null(), 0usize);
        assert_eq!(sys::ffk_any_as_str(&text, &mut data, &mut size), 0);
        let s = std::slice::from_raw_parts(data.cast::<u8>(), size);
        assert_eq!(s, br#"{"root_index":0,"nodes":[{"type":"int","data":42}]}"#);
        let mut back = sys::ffk_any_none();
        assert_eq!(sys::ffk_from_json_graph(data, size, &mut back, std::ptr::null_mut()), 0);
        assert_eq!(back.__bindgen_anon_1.v_int, 42);
        sys::ffk_any_release(&mut text);

        // Structural equality with a mismatch report.
        let (a, b) = (sys::ffk_any_int(1), sys::ffk_any_int(2));
        let (mut l, mut r) = (std::ptr::null_mut(), std::ptr::null_mut());
        assert_eq!(sys::ffk_structural_first_mismatch(&a, &b, &mut l, &mut r), 1);
        assert_eq!(sys::ffk_access_path_equal(l, r), 1);
        sys::ffk_object_release(l);
        sys::ffk_object_release(r);
        assert_eq!(sys::ffk_structural_first_mismatch(&a, &a, &mut l, &mut r), 0);
        assert!(l.is_null() && r.is_null());
    }
}

#[test]
fn stream_headers_are_bound() {
    unsafe {
        // ffk_device_has_streams is a static inline helper: the shim defines it.
        assert!(sys::ffk_device_has_streams(sys::ffk_device(sys::FFK_DEVICE_CUDA as i32, 0)));
        assert!(!sys::ffk_device_has_streams(sys::ffk_device(sys::FFK_DEVICE_CPU as i32, 0)));
        let cuda = sys::FFK_DEVICE_CUDA as i32;
        let mut prev = 7 as *mut std::ffi::c_void;
        assert_eq!(sys::ffk_stream_set(cuda, 5, 2 as *mut _, &mut prev), 0);
        assert!(prev.is_null());
        assert_eq!(sys::ffk_stream_get(cuda, 5) as usize, 2);
        let mut out = 0i64;
        assert!(sys::ffk_dlpack_consumer_stream(sys::ffk_device(cuda, 5), &mut out));
        assert_eq!(out, 2);
        assert_eq!(sys::ffk_stream_set(cuda, 5, std::ptr::null_mut(), std::ptr::null_mut()), 0);
        assert_eq!(sys::ffk_stream_order(sys::ffk_device(cuda, 5), 1 as *mut _, 1 as *mut _), 0);
        assert_eq!(sys::ffk_stream_set(cuda, -1, std::ptr::null_mut(), std::ptr::null_mut()), -1);
        let e = sys::ffk_error_fetch();
        assert_eq!(CStr::from_ptr(sys::ffk_error_kind(e)).to_str().unwrap(), "ValueError");
        sys::ffk_object_release(e.cast());
    }
}

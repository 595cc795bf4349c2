//! Tensors: allocation, views, slices with dtype and sharing checks, DLPack, shared memory.
mod common;
use common::testing;
use ffikit::{Any, AnyView, DataType, Device, Tensor};

#[test]
fn slices_check_dtype_density_and_exclusivity() {
    let mut t = Tensor::zeros(&[2, 3], DataType::of::<i32>(), Device::cpu()).unwrap();
    assert_eq!((t.shape(), t.strides(), t.numel()), (&[2i64, 3][..], &[3i64, 1][..], 6));
    t.as_mut_slice::<i32>().unwrap().iter_mut().enumerate().for_each(|(i, x)| *x = i as i32);
    assert_eq!(t.as_slice::<i32>().unwrap(), &[0, 1, 2, 3, 4, 5]);
    assert_eq!(t.as_slice::<f32>().unwrap_err().to_string(), "TypeError: tensor of int32 viewed as float32");
    let clone = t.clone();
    assert!(t.as_mut_slice::<i32>().is_err(), "another handle exists");
    drop(clone);
    let view = t.slice(1, 0, 3, 2).unwrap();
    assert_eq!(view.shape(), &[2, 2]);
    assert!(view.shares_storage(&t));
    assert!(view.as_slice::<i32>().is_err(), "strided");
    assert_eq!(view.to_vec::<i32>().unwrap(), vec![0, 2, 3, 5]);
    assert!(t.as_mut_slice::<i32>().is_err(), "a view shares the storage");
    drop(view);
    t.fill(7i64).unwrap();
    assert_eq!(t.as_slice::<i32>().unwrap(), &[7; 6]);
}

#[test]
fn views_share_memory_and_errors_name_the_problem() {
    let t = Tensor::from_slice(&[1.0f64, 2.0, 3.0, 4.0, 5.0, 6.0], &[2, 3]).unwrap();
    let tt = t.transpose(0, 1).unwrap();
    assert!(!tt.is_contiguous());
    let e = tt.reshape(&[6]).unwrap_err();
    assert!(e.message().starts_with("cannot reshape a non-contiguous tensor of shape [3, 2]"), "{}", e);
    let c = tt.contiguous().unwrap();
    assert!(c.is_contiguous() && !c.shares_storage(&t));
    assert_eq!(c.as_slice::<f64>().unwrap(), &[1.0, 4.0, 2.0, 5.0, 3.0, 6.0]);
    assert_eq!(t.reshape(&[3, -1]).unwrap().shape(), &[3, 2]);
    assert_eq!(t.unsqueeze(0).unwrap().shape(), &[1, 2, 3]);
    assert_eq!(t.unsqueeze(0).unwrap().squeeze(0).unwrap().shape(), &[2, 3]);
    assert_eq!(t.permute(&[1, 0]).unwrap().strides(), &[1, 3]);
    assert_eq!(Tensor::from_slice(&[1u8], &[2]).unwrap_err().kind(), "ValueError");
}

#[test]
fn dlpack_round_trip_keeps_the_data_and_the_deleter_runs_once() {
    let mut t = Tensor::from_slice(&[1i64, 2, 3], &[3]).unwrap();
    let m = t.to_dlpack().unwrap();
    assert_eq!(m.version(), (1, 1));
    assert_eq!(m.dl_tensor().data as usize, t.data_ptr() as usize);
    assert_eq!(t.use_count(), 2, "the export holds the tensor");
    assert!(t.as_mut_slice::<i64>().is_err());
    let back = Tensor::from_dlpack(m).map_err(|(e, _)| e).unwrap();
    assert_eq!(back.data_ptr(), t.data_ptr());
    assert_eq!(back.to_vec::<i64>().unwrap(), vec![1, 2, 3]);
    drop(back); // runs the export's deleter: our tensor is alone again
    assert_eq!(t.use_count(), 1);
    t.as_mut_slice::<i64>().unwrap()[0] = 9;
    let unused = t.to_dlpack().unwrap();
    drop(unused); // Drop calls the deleter
    assert_eq!(t.use_count(), 1);
}

#[test]
fn shared_memory_tensors_are_written_by_copy() {
    let mut a = Tensor::new_shared(None, &[4], DataType::of::<f32>()).unwrap();
    let name = a.shared_name().unwrap();
    assert!(name.starts_with("/ffikit-"), "{}", name);
    let b = Tensor::attach_shared(&name, &[4], DataType::of::<f32>()).unwrap();
    a.write_from(&[1.0f32, 2.0, 3.0, 4.0]).unwrap();
    assert_eq!(b.to_vec::<f32>().unwrap(), vec![1.0, 2.0, 3.0, 4.0]);
    assert!(b.as_slice::<f32>().is_err(), "shared memory is never lent as a slice");
}

#[test]
fn tensors_cross_functions_and_containers() {
    let t = Tensor::from_slice(&[1.0f32, 2.0], &[2]).unwrap();
    let r = testing("schema_id_tensor").call(&[AnyView::from(&t)]).unwrap();
    assert!(r.to::<Tensor>().unwrap().ptr_eq(&t));
    let arr = testing("make_array_with_tensor").call(&[AnyView::from(&t)]).unwrap();
    assert_eq!(arr.to_string(), "(float32[2]@cpu:0,)");
    let a: ffikit::Array<Tensor> = arr.to().unwrap();
    assert!(a[0].ptr_eq(&t));
    assert_eq!(Any::from(&t).kind(), ffikit::Kind::Tensor);
}

#[test]
fn cuda_allocation_without_a_device_is_an_error_not_a_crash() {
    match Tensor::zeros(&[2], DataType::of::<f32>(), Device::new(2, 0)) {
        Ok(t) => {
            // A machine with a GPU: device memory is never lent as a slice.
            assert!(t.as_slice::<f32>().is_err());
            assert_eq!(t.to_vec::<f32>().unwrap(), vec![0.0, 0.0]);
        }
        Err(e) => assert_eq!(e.kind(), "RuntimeError", "{}", e),
    }
}

#[test]
fn empty_and_scalar_tensors() {
    let e = Tensor::from_slice::<f32>(&[], &[0, 3]).unwrap();
    assert_eq!((e.numel(), e.shape()), (0, &[0i64, 3][..]));
    assert_eq!(e.as_slice::<f32>().unwrap(), &[] as &[f32]);
    assert_eq!(e.to_vec::<f32>().unwrap(), Vec::<f32>::new());
    let s = Tensor::from_slice(&[42i16], &[]).unwrap();
    assert_eq!((s.numel(), s.shape().len()), (1, 0));
    assert_eq!(s.to_vec::<i16>().unwrap(), vec![42]);
}

/// A read-only tensor: an export re-imported with DLPack's read-only flag set.
fn read_only(values: &[i32]) -> Tensor {
    let t = Tensor::from_slice(values, &[values.len() as i64]).unwrap();
    let raw = t.to_dlpack().unwrap().into_raw();
    // SAFETY: our own live export; the flag is the producer's to set before handing it over.
    unsafe { (*raw).flags |= 1 };
    // SAFETY: a valid managed tensor we own.
    let ro = Tensor::from_dlpack(unsafe { ffikit::DLPack::from_raw(raw) }).map_err(|(e, _)| e).unwrap();
    assert!(ro.is_read_only());
    ro
}

#[test]
fn writes_to_a_read_only_tensor_are_refused_by_c() {
    let mut ro = read_only(&[1, 2, 3]);
    let e = ro.fill(0i64).unwrap_err();
    assert_eq!(e.to_string(), "ValueError: fill: the tensor is read-only (its DLPack producer marked it so)");
    let src = Tensor::from_slice(&[0i32; 3], &[3]).unwrap();
    let e = ro.copy_from(&src).unwrap_err();
    assert_eq!(e.to_string(), "ValueError: copy_from: the tensor is read-only (its DLPack producer marked it so)");
    let e = ro.write_from(&[0i32; 3]).unwrap_err();
    assert!(e.message().starts_with("write_from: the tensor is read-only"), "{}", e);
    assert!(ro.as_mut_slice::<i32>().unwrap_err().message().starts_with("as_mut_slice: the tensor is read-only"));
    assert_eq!(ro.to_vec::<i32>().unwrap(), vec![1, 2, 3]);
}

#[test]
fn dimensions_and_indices_are_checked_in_c_and_named_as_given() {
    let t = Tensor::from_slice(&[0i64, 1, 2, 3, 4, 5], &[2, 3]).unwrap();
    let e = t.transpose(-100, 0).unwrap_err();
    assert_eq!(e.to_string(), "IndexError: transpose: dimension -100 is out of range for a tensor with 2 dimensions (-2 to 1)");
    assert_eq!(t.transpose(-1, -2).unwrap().shape(), &[3, 2]);
    assert_eq!(t.select(0, -1).unwrap().to_vec::<i64>().unwrap(), vec![3, 4, 5]);
    assert_eq!(t.select(1, 1).unwrap().to_vec::<i64>().unwrap(), vec![1, 4]);
    assert_eq!(t.select(1, 3).unwrap_err().to_string(), "IndexError: index 3 is out of range for dimension 1 of size 3");
    let scalar = t.select(0, 0).unwrap().select(0, 0).unwrap();
    assert_eq!(scalar.slice(0, 0, 1, 1).unwrap_err().to_string(), "IndexError: a 0-d tensor cannot be indexed");
    assert_eq!((t.size(-1).unwrap(), t.size(0).unwrap()), (3, 2));
    assert_eq!(t.size(2).unwrap_err().error_kind(), ffikit::ErrorKind::Index);
    let e = t.squeeze(5).unwrap_err();
    assert!(!e.message().contains("ffk_"), "{}", e);
}

#[test]
fn item_and_fill_keep_values_exact() {
    let mut t = Tensor::from_slice(&[0i32; 2], &[2]).unwrap();
    let e = t.fill(1i64 << 40).unwrap_err();
    assert_eq!(e.error_kind(), ffikit::ErrorKind::Overflow, "{}", e);
    assert_eq!(t.fill(-1.5f64).unwrap_err().error_kind(), ffikit::ErrorKind::Value);
    t.fill(-7i64).unwrap();
    assert_eq!(t.as_slice::<i32>().unwrap(), &[-7, -7]);
    let mut u = Tensor::from_slice(&[0u8; 1], &[1]).unwrap();
    assert_eq!(u.fill(-1i64).unwrap_err().to_string(), "OverflowError: fill: -1 is out of range for uint8");
    assert_eq!(t.item().unwrap_err().to_string(), "ValueError: item: a tensor with 2 elements has no single value (it needs exactly one)");
    assert_eq!(t.select(0, 1).unwrap().item().unwrap().view().to::<i64>().unwrap(), -7);
    let f = Tensor::from_slice(&[0.25f64], &[]).unwrap();
    assert_eq!(f.item().unwrap().view().to::<f64>().unwrap(), 0.25);
}

#[test]
fn shared_memory_sizes_are_checked_in_c() {
    let e = Tensor::new_shared(None, &[1 << 61, 2], DataType::of::<i64>()).unwrap_err();
    assert_eq!(e.to_string(), "ValueError: empty_shared: shape [2305843009213693952, 2] of int64 has more bytes than fit in 64 bits");
    let e = Tensor::new_shared(None, &[i64::MAX, 2], DataType::of::<i64>()).unwrap_err();
    assert_eq!(e.to_string(), "ValueError: empty_shared: shape [9223372036854775807, 2] has more elements than fit in 64 bits");
    let e = Tensor::new_shared(Some("no-slash"), &[2], DataType::of::<i64>()).unwrap_err();
    assert!(e.message().contains("does not start with '/'"), "{}", e);
    let missing = format!("/ffikit-rust-missing-{}", std::process::id());
    let e = Tensor::attach_shared(&missing, &[2], DataType::of::<i64>()).unwrap_err();
    assert_eq!(e.error_kind(), ffikit::ErrorKind::FileNotFound, "{}", e);
}

/// Every Rust entry that takes a shape answers through C's one shape rule: an error naming
/// the operation, the argument and the value, never a panic (from_slice multiplied the
/// shape itself, which overflowed: a panic in debug builds, a wrong count in release).
#[test]
fn shapes_go_through_the_c_rule() {
    let cases: &[(&[i64], &str)] = &[
        (&[i64::MAX, 2], "ValueError: from_slice: shape [9223372036854775807, 2] has more elements than fit in 64 bits"),
        (&[1 << 62, 4], "ValueError: from_slice: shape [4611686018427387904, 4] has more elements than fit in 64 bits"),
        (&[1 << 61], "ValueError: from_slice: shape [2305843009213693952] of float32 has more bytes than fit in 64 bits"),
        (&[2, -3], "ValueError: from_slice: shape[1] is -3, and a dimension cannot be negative"),
        (&[-1, -1], "ValueError: from_slice: shape[0] is -1, and a dimension cannot be negative"),
        (&[1; 33], "ValueError: from_slice: shape has 33 dimensions; a tensor has 0 to 32"),
    ];
    for (shape, want) in cases {
        assert_eq!(Tensor::from_slice(&[1.0f32], shape).unwrap_err().to_string(), *want);
    }
    let e = Tensor::from_slice(&[1.0f32, 2.0], &[3]).unwrap_err();
    assert_eq!(e.to_string(), "ValueError: from_slice: shape [3] holds 3 elements but the slice has 2");
    let z = Tensor::zeros(&[i64::MAX, 2], DataType::of::<u8>(), Device::cpu()).unwrap_err();
    assert_eq!(z.to_string(), "ValueError: zeros: shape [9223372036854775807, 2] has more elements than fit in 64 bits");
    let z = Tensor::zeros(&[4, -1], DataType::of::<u8>(), Device::cpu()).unwrap_err();
    assert_eq!(z.to_string(), "ValueError: zeros: shape[1] is -1, and a dimension cannot be negative");
    let t = Tensor::from_slice(&[0u8; 6], &[2, 3]).unwrap();
    assert_eq!(t.reshape(&[-1, -2]).unwrap_err().to_string(), "ValueError: reshape: shape[1] is -2, and a dimension cannot be negative");
    assert_eq!(t.reshape(&[1; 40]).unwrap_err().to_string(), "ValueError: reshape: shape has 40 dimensions; a tensor has 0 to 32");
    assert_eq!(t.reshape(&[i64::MAX, 2, -1]).unwrap_err().to_string(), "ValueError: cannot reshape a tensor of shape [2, 3] (6 elements) to [9223372036854775807, 2, -1]");
    assert_eq!(t.reshape(&[3, -1]).unwrap().shape(), &[3, 2]);
}

#[test]
fn check_bytes_accepts_exact_buffers_at_any_address_and_names_the_operation() {
    let f32 = DataType::of::<f32>();
    Tensor::check_bytes("unpickle", &[2, 3], f32, &[0u8; 24]).unwrap();
    // Misaligned for float32: still wrapped as it is.
    let frame = [0u8; 25];
    Tensor::check_bytes("unpickle", &[2, 3], f32, &frame[1..]).unwrap();
    Tensor::check_bytes("unpickle", &[0, 3], f32, &[]).unwrap();
    Tensor::check_bytes("unpickle", &[], DataType::of::<i64>(), &[0u8; 8]).unwrap();
    let e = Tensor::check_bytes("unpickle", &[2, 3], f32, &[0u8; 12]).unwrap_err();
    assert_eq!(e.to_string(), "ValueError: unpickle: the buffer has 12 bytes, but a float32 tensor of shape [2, 3] has 24");
    let e = Tensor::check_bytes("load", &[-1], f32, &[]).unwrap_err();
    assert_eq!(e.kind(), "ValueError");
    assert!(e.message().starts_with("load: "), "{}", e.message());
    let e = Tensor::check_bytes("load", &[i64::MAX, 2], f32, &[]).unwrap_err();
    assert!(e.message().starts_with("load: ") && e.message().contains("64 bits"), "{}", e.message());
}

#[test]
fn permute_count_and_entries_are_checked_in_c() {
    let t = Tensor::zeros(&[2, 3], DataType::of::<f32>(), Device::cpu()).unwrap();
    let e = t.permute(&[0, 1, 2]).unwrap_err();
    assert_eq!(e.to_string(), "ValueError: permute: 3 dimensions given for a tensor with 2");
    let e = t.permute(&[0, 1 << 40]).unwrap_err();
    assert!(e.to_string().starts_with("IndexError: permute: dimension 1099511627776 is out of range"), "{}", e);
    assert_eq!(t.permute(&[-1, 0]).unwrap().shape(), &[3, 2]);
}

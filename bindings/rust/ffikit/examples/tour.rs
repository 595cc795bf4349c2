//! The Rust tour: the C tour's main sections (examples/tour.c) through the safe crate.
//! Run it with `./setup.sh`, or `bindings/rust/run.sh tour`.
use ffikit::{Any, AnyView, Array, DataType, Device, Dict, Error, Function, Kind, List, Map, Module, ObjectRef, Reflect, Result, Shape, Str, Tensor, TypeInfo};

ffikit::reflected_type! {
    /// A circle whose type is defined in Rust: C and Python see its fields and methods.
    #[type_key = "tour.Circle", layout = CircleLayout]
    pub struct Circle {
        /// The radius.
        #[writable(set_r)]
        r: f64 = 1.0,
        /// A name, fixed at construction.
        name: String = "circle".to_string(),
    }
    methods {
        /// The area.
        fn area(this: Circle) -> Result<f64> {
            Ok(std::f64::consts::PI * this.r() * this.r())
        }
    }
}

fn show(label: &str, v: &Any) {
    println!("  {:<34} {:<26} ({})", label, v.to_string(), v.type_name());
}

fn main() -> Result<()> {
    println!("ffikit {} (ABI {}.{}) from Rust\n", env!("CARGO_PKG_VERSION"), ffikit::abi_version() >> 16, ffikit::abi_version() & 0xffff);

    println!("1. Any: one 16-byte value for everything that crosses a boundary");
    for (label, v) in [
        ("None", Any::none()),
        ("Int", Any::from(42i64)),
        ("Bool", Any::from(true)),
        ("Float (shortest text)", Any::from(0.1)),
        ("DataType", Any::from("float32x4".parse::<DataType>()?)),
        ("Device", Any::from("cuda:1".parse::<Device>()?)),
    ] {
        show(label, &v);
    }
    let kind = match Any::from(7i64).kind() {
        Kind::Int => "an int",
        _ => "something else",
    };
    println!(
        "  match on Kind: {}; bool as i64 -> {}; dtype as f64 -> {}\n",
        kind,
        i64::try_from(&Any::from(true))?,
        f64::try_from(&Any::from(DataType::of::<f32>())).unwrap_err()
    );

    println!("2. Strings: up to 7 bytes live inside the Any, longer ones are shared objects");
    show("small (no allocation)", &Any::from("hello"));
    show("heap (refcounted object)", &Any::from("hello, ffikit: strings longer than seven bytes"));
    println!("  inline \"hello\" == object \"hello\": {}\n", Any::from("hello") == Any::from(&Str::new("hello")?));

    println!("3. Objects: Clone retains, Drop releases");
    let s = Str::new("a shared string object")?;
    let t = s.clone();
    println!("  after clone: use_count = {}", s.use_count());
    drop(t);
    println!("  after drop:  use_count = {}\n", s.use_count());

    println!("5. DataType, Device, Shape");
    let bf: DataType = "bfloat16".parse()?;
    println!("  parse \"bfloat16\" -> {} ({} bytes)", bf, bf.itemsize());
    let shape = Shape::new(&[2, 3, 4])?;
    show("Shape", &Any::from(&shape));
    println!("  product = {}\n", shape.product());

    println!("6. Errors: Result<T, Error>, with the C Error object inside");
    let e = "gpu:0".parse::<Device>().unwrap_err();
    println!("  {}", e);
    println!("  first frame: {}\n", e.backtrace().lines().next().unwrap_or(""));

    println!("7. Array: copy-on-write. A change through one handle never shows through another");
    let mut a: Array<i64> = vec![1, 2, 3].into();
    let b = a.clone();
    a.set(0, 100)?;
    show("a after set", &Any::from(&a));
    show("b, untouched", &Any::from(&b));
    let mut m: Map<String, i64> = Map::new()?;
    m.insert("x".into(), 1)?;
    let m2 = m.clone();
    m.insert("y".into(), 2)?;
    println!("  Map: m = {}, its earlier clone = {}\n", m, m2);

    println!("8. List and Dict: shared. Every handle sees every change, from any thread");
    let l: List<i64> = List::new()?;
    let l2 = l.clone();
    std::thread::scope(|sc| {
        for i in 1..=3 {
            let l = &l;
            sc.spawn(move || l.push(i).unwrap());
        }
    });
    println!("  l2 after 3 threads pushed through l: {} items", l2.len());
    let d: Dict<Any, Any> = Dict::new()?;
    d.insert(Any::from(1i64), Any::from(1i64))?;
    d.insert(Any::from(1.0), Any::from(1.0))?;
    d.insert(Any::from(true), Any::from(true))?;
    show("d (1, 1.0, True: three keys)", &Any::from(&d));
    for item in &d {
        if let Err(e) = item {
            println!("  erase while iterating: {}", e);
            break;
        }
        d.remove(&Any::from(1.0))?;
    }
    println!();

    println!("10. Functions: Rust closures, called by name from the global registry");
    let add = Function::from_packed("tour.add", |args: &[AnyView]| Ok(Any::from(args[0].to::<i64>()? + args[1].to::<i64>()?)))?;
    add.register_global("tour.add", true)?;
    let found = Function::get_global("tour.add")?.expect("registered");
    show("tour.add(2, 40)", &found.call(&[AnyView::from(2i64), AnyView::from(40i64)])?);
    let fail = Function::from_packed("tour.fail", |_| Err(Error::new("ValueError", "raised in Rust")))?;
    let e = fail.call(&[]).unwrap_err();
    println!("  tour.fail() -> {}", e);

    println!("\n11. Typed signatures: C checks and converts before the Rust code runs");
    let scale = Function::from_typed("tour.scale", |(xs, k): (Array<f64>, f64)| Ok(xs.iter().map(|x| x * k).collect::<Array<f64>>()))?;
    println!("  signature: {}", scale.signature().unwrap_or_default());
    let ints: List = vec![Any::from(1i64), Any::from(2i64), Any::from(true)].into();
    show("tour.scale(List [1, 2, True], 10)", &scale.call(&[AnyView::from(&ints), AnyView::from(10i64)])?);
    let e = scale.call(&[AnyView::from(&Any::from("1, 2")), AnyView::from(10i64)]).unwrap_err();
    println!("  tour.scale(\"1, 2\", 10) -> {}", e);

    println!("\n12. Modules: load a shared library of Functions at run time");
    match std::env::var("FFIKIT_TESTING_LIB") {
        Ok(path) => {
            let m = Module::load(&path)?;
            let add_one = m.get_function("add_one")?;
            println!("  {}: {}", path.rsplit('/').next().unwrap_or(&path), add_one.signature().unwrap_or_default());
            show("add_one(41)", &add_one.call(&[AnyView::from(41i64)])?);
            let apply = Function::get_global("testing.apply")?.expect("registered by the module's init");
            let raise = Function::get_global("testing.raise_error")?.expect("registered");
            let e = apply.call(&[AnyView::from(&raise), Any::from("ValueError").view(), Any::from("raised inside the module").view()]).unwrap_err();
            println!("  testing.apply(testing.raise_error, ...) -> {}", e);
        }
        Err(_) => println!("  (FFIKIT_TESTING_LIB is not set)"),
    }
    if let Ok(path) = std::env::var("FFIKIT_RUSTMOD_LIB") {
        let m = Module::load(&path)?;
        let f = m.get_function("rs_add")?;
        println!("  a Rust-built module: {} -> {}", f.signature().unwrap_or_default(), f.call(&[AnyView::from(1i64), AnyView::from(2i64)])?);
    }

    println!("\n13. Tensors: storage, views that share it, slices, DLPack, shared memory, CUDA");
    let t = Tensor::from_slice(&[1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0], &[2, 3])?;
    let tt = t.transpose(0, 1)?;
    show("a tensor", &Any::from(&t));
    show("its transpose (a view)", &Any::from(&tt));
    println!("  transpose contiguous: {}; shares storage: {}; as a Vec: {:?}", tt.is_contiguous(), tt.shares_storage(&t), tt.to_vec::<f32>()?);
    println!("  as_slice::<f32>() of the view -> {}", tt.as_slice::<f32>().unwrap_err());
    let m = t.to_dlpack()?;
    let back = Tensor::from_dlpack(m).map_err(|(e, _)| e)?;
    println!("  DLPack round trip: same data pointer: {}", back.data_ptr() == t.data_ptr());
    let mut shm = Tensor::new_shared(None, &[3], DataType::of::<f32>())?;
    shm.write_from(&[1.0f32, 2.0, 3.0])?;
    let name = shm.shared_name().unwrap_or_default();
    let other = Tensor::attach_shared(&name, &[3], DataType::of::<f32>())?;
    println!("  shared memory {}: attached again, reads {:?}", name, other.to_vec::<f32>()?);
    match Tensor::zeros(&[2], DataType::of::<f32>(), "cuda:0".parse()?) {
        Ok(c) => println!("  on the GPU: {}", c),
        Err(e) => println!("  Tensor::zeros(.., cuda:0) -> {}", e),
    }

    println!("\n14. Reflected types: fields and methods by name, and types defined in Rust");
    let c = Circle::new(2.0, "unit".into())?;
    println!("  Circle::new(2.0, \"unit\"): r() = {} (a load at offset {}), name() = {:?}", c.r(), std::mem::offset_of!(CircleLayout, r), c.name()?);
    c.set_r(3.0)?;
    println!("  after set_r(3.0): by name r = {}, area() = {:.3}", c.field::<f64>("r")?, c.call_method("area", &[])?.to::<f64>()?);
    for f in c.fields()? {
        println!("  field {:<5} {:<6} {:?}  {}", f.name(), f.type_text(), f.flags(), f.doc().unwrap_or(""));
    }
    println!("  c.set_field(\"name\", ..) -> {}", c.set_field("name", "other".to_string()).unwrap_err());
    if let Some(pair) = TypeInfo::lookup("testing.TestIntPair")? {
        let p = pair.create(&[AnyView::from(1i64), AnyView::from(2i64)], &[])?;
        println!("  C-defined {}: a = {}, sum() = {}", p.type_name(), p.field::<i64>("a")?, p.call_method("sum", &[])?);
    }

    println!("\n15. Structural tools and the JSON graph (TVM-FFI's format)");
    let c2 = Circle::new(3.0, "unit".into())?;
    println!("  structural_eq(c, Circle(3.0, \"unit\")) = {}; hashes equal: {}", ffikit::structural_eq(&c, &c2)?,
        ffikit::structural_hash(&c)? == ffikit::structural_hash(&c2)?);
    let scene: Map<String, Array<Any>> = vec![("shapes".to_string(), vec![Any::from(&c), Any::from(&c)].into())].into();
    let other: Map<String, Array<Any>> = vec![("shapes".to_string(), vec![Any::from(&c), Any::from(&Circle::new(4.0, "unit".into())?)].into())].into();
    if let Some((lhs, rhs)) = ffikit::first_structural_mismatch(&scene, &other)? {
        println!("  first mismatch: {} / {}", lhs, rhs);
    }
    let text = ffikit::to_json_graph(&scene, None)?;
    println!("  to_json_graph(scene) = {}", text);
    let back: Map<String, Array<Any>> = ffikit::from_json_graph(&text)?.to()?;
    let shapes = back.get(&"shapes".to_string()).expect("the key is in the document");
    println!("  read back: {}; the shared circle is one object: {}", back,
        shapes.get(0)?.to_object()?.ptr_eq(&shapes.get(1)?.to_object()?));

    let o: ObjectRef = a.into();
    println!("\nDone ({} holds {}).", o.type_name(), o);
    Ok(())
}

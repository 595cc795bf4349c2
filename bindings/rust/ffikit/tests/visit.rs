//! Structural walks and rewrites from Rust (C's ffikit/structural_visit.h): orders, field
//! names and paths, regions, skip and stop, sharing of unchanged subtrees, variables
//! followed to their uses, errors and panics in callbacks. The answers are tvm_ffi
//! 0.1.15's (tests/containers/structural_visit_test.cc has the rest).
use ffikit::{
    structural_map, structural_mutate, structural_visit, structural_walk, Any, AnyView, Array, DefRegion, Function, ObjectType,
    StructuralKind, TypeInfo, WalkControl, WalkOrder,
};
use std::cell::RefCell;
use std::sync::OnceLock;

ffikit::reflected_type! {
    /// A variable with a compared annotation.
    #[type_key = "rstest.visit.TVar", layout = TVarLayout]
    pub struct TVar {
        ty: Any,
    }
}

ffikit::reflected_type! {
    /// A tree.
    #[type_key = "rstest.visit.Add", layout = AddLayout]
    pub struct Add {
        a: Any,
        b: Any,
    }
}

ffikit::reflected_type! {
    /// Its parameter is a definition region.
    #[type_key = "rstest.visit.Lam", layout = LamLayout]
    pub struct Lam {
        #[flags(S_DEF)]
        param: Any,
        body: Any,
    }
}

ffikit::reflected_type! {
    /// Its __s_visit__ hook visits only `b`; its __s_mutate__ hook swaps the two.
    #[type_key = "rstest.visit.Hooked", layout = HookedLayout]
    pub struct Hooked {
        a: Any,
        b: Any,
    }
}

fn setup() {
    static DONE: OnceLock<()> = OnceLock::new();
    DONE.get_or_init(|| {
        TVar::type_info().unwrap().set_structural_kind(StructuralKind::Var).unwrap();
    });
}

fn tvar(ty: i64) -> Any {
    Any::from(&TVar::new(Any::from(ty)).unwrap())
}
fn add(a: Any, b: Any) -> Any {
    Any::from(&Add::new(a, b).unwrap())
}
fn lam(p: Any, body: Any) -> Any {
    Any::from(&Lam::new(p, body).unwrap())
}

#[test]
fn walk_orders_fields_paths_and_regions() {
    setup();
    let t = lam(tvar(1), add(tvar(2), Any::from(&Array::<i64>::from(vec![5, 6]))));
    let mut pre = vec![];
    assert!(structural_walk(&t, WalkOrder::Pre, |_, step, region| {
        pre.push((step.path()?.to_string(), step.field().map(str::to_string), region));
        Ok(WalkControl::Advance)
    })
    .unwrap());
    let paths: Vec<&str> = pre.iter().map(|(p, _, _)| p.as_str()).collect();
    assert_eq!(
        paths,
        ["<root>", "<root>.param", "<root>.param.ty", "<root>.body", "<root>.body.a", "<root>.body.a.ty", "<root>.body.b",
         "<root>.body.b[0]", "<root>.body.b[1]"]
    );
    assert_eq!(pre[1].1.as_deref(), Some("param"));
    assert_eq!(pre[1].2, DefRegion::Pattern);
    assert_eq!(pre[3].2, DefRegion::None);
    let mut post = 0;
    structural_walk(&t, WalkOrder::Post, |_, _, _| {
        post += 1;
        Ok(WalkControl::Advance)
    })
    .unwrap();
    assert_eq!(post, pre.len());
}

#[test]
fn walk_skip_stop_errors_and_panics() {
    setup();
    let t = add(add(Any::from(1i64), Any::from(2i64)), Any::from(3i64));
    let mut seen = 0;
    structural_walk(&t, WalkOrder::Pre, |_, step, _| {
        seen += 1;
        Ok(if step.field() == Some("a") { WalkControl::Skip } else { WalkControl::Advance })
    })
    .unwrap();
    assert_eq!(seen, 3); // the root, a (children skipped), b
    let completed = structural_walk(&t, WalkOrder::Pre, |_, _, _| Ok(WalkControl::Stop)).unwrap();
    assert!(!completed);
    let err = structural_walk(&t, WalkOrder::Post, |_, _, _| Err(ffikit::Error::new("ValueError", "no"))).unwrap_err();
    assert_eq!(err.to_string(), "ValueError: no");
    let err = structural_walk(&t, WalkOrder::Post, |_, _, _| -> ffikit::Result<WalkControl> { panic!("boom") }).unwrap_err();
    assert!(err.to_string().contains("panicked: boom"), "{}", err);
}

#[test]
fn map_shares_unchanged_subtrees_and_follows_variables() {
    setup();
    let inner = add(Any::from("s"), Any::from("t"));
    let t = add(Any::from(1i64), inner.clone());
    let inc = |v: ffikit::AnyView<'_>, _: &ffikit::Mutator<'_>| {
        Ok(match v.to::<i64>() {
            Ok(i) => Any::from(i + 100),
            Err(_) => v.to_any(),
        })
    };
    let out = structural_map(&t, WalkOrder::Post, inc).unwrap();
    assert_eq!(out.to_string(), "rstest.visit.Add(a=101, b=rstest.visit.Add(a=\"s\", b=\"t\"))");
    let out_b = out.to::<Add>().unwrap().b().unwrap();
    let (shared, original) = (out_b.to::<Add>().unwrap(), inner.to::<Add>().unwrap());
    assert!(shared.as_object().ptr_eq(original.as_object()), "the unchanged subtree is shared");
    // Lam(a, Add(a, a)): the new parameter replaces the variable at both uses.
    let a = tvar(1);
    let l = lam(a.clone(), add(a.clone(), a.clone()));
    let out = structural_map(&l, WalkOrder::Post, inc).unwrap();
    assert_eq!(
        out.to_string(),
        "rstest.visit.Lam(param=rstest.visit.TVar(ty=101), body=rstest.visit.Add(a=rstest.visit.TVar(ty=101), b=rstest.visit.TVar(ty=101)))"
    );
}

#[test]
fn mutate_callback_owns_the_rewrite() {
    setup();
    let t = add(Any::from(1i64), Any::from(2i64));
    let out = structural_mutate(&t, |v, m| {
        if let Ok(x) = v.to::<Add>() {
            let (a, b) = (x.a().unwrap(), x.b().unwrap());
            return Ok(add(m.mutate(&b)?, m.mutate(&a)?));
        }
        match v.to::<i64>() {
            Ok(i) => Ok(Any::from(i * 2)),
            Err(_) => m.default_mutate(v),
        }
    })
    .unwrap();
    assert_eq!(out.to_string(), "rstest.visit.Add(a=4, b=2)");
}

#[test]
fn visit_callback_owns_the_descent_and_regions() {
    setup();
    // Lam(x, Add(x, 7)): the callback skips Add's children, so 7 is never seen.
    let x = tvar(1);
    let t = lam(x.clone(), add(x.clone(), Any::from(7i64)));
    let seen = RefCell::new(vec![]);
    let completed = structural_visit(&t, |v, visitor| {
        seen.borrow_mut().push((v.type_name().to_string(), visitor.region()));
        if v.to::<Add>().is_ok() {
            return Ok(WalkControl::Advance);
        }
        Ok(if visitor.default_visit(v)? { WalkControl::Advance } else { WalkControl::Stop })
    })
    .unwrap();
    assert!(completed);
    let seen = seen.into_inner();
    let keys: Vec<&str> = seen.iter().map(|(k, _)| k.as_str()).collect();
    assert_eq!(keys, ["rstest.visit.Lam", "rstest.visit.TVar", "int", "rstest.visit.Add"]);
    assert_eq!(seen[1].1, DefRegion::Pattern, "the parameter is a definition");
    assert_eq!(seen[3].1, DefRegion::None);

    // A scoped region: the child visited inside in_region(Simple) sees Simple, and after it None again.
    let regions = RefCell::new(vec![]);
    let pair = add(Any::from(1i64), Any::from(2i64));
    structural_visit(&pair, |v, visitor| {
        regions.borrow_mut().push(visitor.region());
        if let Ok(a) = v.to::<Add>() {
            visitor.in_region(DefRegion::Simple, |vis| vis.visit(&a.a().unwrap()))?;
            visitor.visit(&a.b().unwrap())?;
        }
        Ok(WalkControl::Advance)
    })
    .unwrap();
    assert_eq!(regions.into_inner(), [DefRegion::None, DefRegion::Simple, DefRegion::None]);

    // Stop ends the whole visit; errors and panics come back as errors.
    let arr = Any::from(&Array::<i64>::from(vec![1, 2, 3]));
    let count = RefCell::new(0);
    let completed = structural_visit(&arr, |v, visitor| {
        *count.borrow_mut() += 1;
        if v.to::<i64>().ok() == Some(2) {
            return Ok(WalkControl::Stop);
        }
        Ok(if visitor.default_visit(v)? { WalkControl::Advance } else { WalkControl::Stop })
    })
    .unwrap();
    assert!(!completed);
    assert_eq!(*count.borrow(), 3); // the Array, 1, 2
    let err = structural_visit(&arr, |_, _| Err(ffikit::Error::new("TypeError", "nope"))).unwrap_err();
    assert_eq!(err.to_string(), "TypeError: nope");
    let err = structural_visit(&arr, |_, _| -> ffikit::Result<WalkControl> { panic!("bang") }).unwrap_err();
    assert!(err.to_string().contains("structural_visit callback panicked: bang"), "{}", err);
}

#[test]
fn type_hooks_replace_the_descent_and_the_rebuild() {
    static HOOKS: OnceLock<()> = OnceLock::new();
    HOOKS.get_or_init(|| {
        let t = Hooked::type_info().unwrap();
        let visit = Function::from_packed("rstest.visit_b", |args: &[AnyView]| {
            let me = args[1].to::<Hooked>()?;
            let b = me.b()?;
            Function::get_global("ffi.StructuralVisitorVisit")?.expect("registered").call(&[args[0], (&b).into()])
        })
        .unwrap();
        t.set_attr(TypeInfo::ATTR_S_VISIT, &visit).unwrap();
        let swap = Function::from_packed("rstest.swap", |args: &[AnyView]| {
            let me = args[1].to::<Hooked>()?;
            let mutate = Function::get_global("ffi.StructuralMutatorMutate")?.expect("registered");
            let (a, b) = (me.a()?, me.b()?);
            let (na, nb) = (mutate.call(&[args[0], (&a).into()])?, mutate.call(&[args[0], (&b).into()])?);
            Ok(Any::from(&Hooked::new(nb, na)?))
        })
        .unwrap();
        t.set_attr(TypeInfo::ATTR_S_MUTATE, &swap).unwrap();
    });
    let h = Any::from(&Hooked::new(Any::from(1i64), Any::from(2i64)).unwrap());
    let mut seen = vec![];
    structural_walk(&h, WalkOrder::Post, |v, _, _| {
        seen.push(v.type_name().to_string());
        Ok(WalkControl::Advance)
    })
    .unwrap();
    assert_eq!(seen, ["int", "rstest.visit.Hooked"], "the hook visits b alone, then the walk calls back for Hooked");
    let mapped = structural_map(&h, WalkOrder::Post, |v, _| Ok(v.to_any())).unwrap();
    let m = mapped.to::<Hooked>().unwrap();
    assert_eq!((m.a().unwrap().to::<i64>().unwrap(), m.b().unwrap().to::<i64>().unwrap()), (2, 1));
}

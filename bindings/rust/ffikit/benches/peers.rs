//! ffikit's Rust API beside its std peers, in the same run, as ratios.
//! Run: `bindings/rust/run.sh bench` (release build). Each case reports the median of
//! several repetitions in ns per operation and the ratio to its peer.
use ffikit::{Any, AnyView, Array, Dict, Function, List, Map, Reflect};
use std::collections::HashMap;
use std::hint::black_box;
use std::time::Instant;

const N: i64 = 1_000_000;
const LOOKUPS: i64 = 100_000;
const REPS: usize = 9;

/// Median ns per op of `f`, which performs `ops` operations per run.
fn time(ops: i64, mut f: impl FnMut()) -> f64 {
    f(); // warm up
    let mut runs: Vec<f64> = (0..REPS)
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed().as_nanos() as f64 / ops as f64
        })
        .collect();
    runs.sort_by(|a, b| a.partial_cmp(b).unwrap());
    runs[REPS / 2]
}

fn report(name: &str, ns: f64, peer_name: &str, peer: f64) {
    println!("{:<44} {:>9.3} ns   {:<30} {:>9.3} ns   ratio {:>6.2}x", name, ns, peer_name, peer, ns / peer);
}

/// `cargo bench --bench peers -- call` runs only the sections whose name contains "call".
fn wanted(section: &str) -> bool {
    std::env::args().skip(1).filter(|a| !a.starts_with('-')).all(|a| section.contains(&a))
}

fn main() {
    println!("N = {} ({} for lookups), median of {} runs", N, LOOKUPS, REPS);
    if wanted("push") {
        push();
    }
    if wanted("get") {
        get();
    }
    if wanted("iterate") {
        iterate();
    }
    if wanted("call") {
        call();
    }
    if wanted("fields") {
        fields();
    }
    if wanted("structural") {
        structural();
    }
}

fn push() {
    let vec_push = time(N, || {
        let mut v = Vec::new();
        for i in 0..N {
            v.push(black_box(i));
        }
        black_box(v);
    });
    let array_push = time(N, || {
        let mut a: Array<i64> = Array::new().unwrap();
        for i in 0..N {
            a.push(black_box(i)).unwrap();
        }
        black_box(a);
    });
    let list_push = time(N, || {
        let l: List<i64> = List::new().unwrap();
        for i in 0..N {
            l.push(black_box(i)).unwrap();
        }
        black_box(l);
    });
    report("Array<i64>::push", array_push, "Vec<i64>::push", vec_push);
    report("List<i64>::push", list_push, "Vec<i64>::push", vec_push);
    // Bulk: collect() goes through try_extend, one C call per 256 values.
    let vec_collect = time(N, || {
        black_box((0..N).map(black_box).collect::<Vec<i64>>());
    });
    let array_collect = time(N, || {
        black_box((0..N).map(black_box).collect::<Array<i64>>());
    });
    let list_collect = time(N, || {
        black_box((0..N).map(black_box).collect::<List<i64>>());
    });
    report("Array<i64>: collect (chunked extend)", array_collect, "Vec<i64>: collect", vec_collect);
    report("List<i64>: collect (chunked extend)", list_collect, "Vec<i64>: collect", vec_collect);
}

fn get() {
    let keys: Vec<i64> = (0..LOOKUPS).map(|i| i * 7919 % LOOKUPS).collect();
    let h: HashMap<i64, i64> = (0..LOOKUPS).map(|i| (i, i)).collect();
    let m: Map<i64, i64> = (0..LOOKUPS).map(|i| (i, i)).collect();
    let d: Dict<i64, i64> = m.to_dict().unwrap();
    let hash_get = time(LOOKUPS, || {
        let mut s = 0;
        for k in &keys {
            s += h.get(black_box(k)).unwrap();
        }
        black_box(s);
    });
    let map_get = time(LOOKUPS, || {
        let mut s = 0;
        for k in &keys {
            s += m.get(black_box(k)).unwrap();
        }
        black_box(s);
    });
    let dict_get = time(LOOKUPS, || {
        let mut s = 0;
        for k in &keys {
            s += d.get(black_box(k)).unwrap().unwrap();
        }
        black_box(s);
    });
    report("Map<i64, i64>::get", map_get, "HashMap<i64, i64>::get", hash_get);
    report("Dict<i64, i64>::get", dict_get, "HashMap<i64, i64>::get", hash_get);
}

fn iterate() {
    // 1M elements do not fit in cache: a 16-byte ffk_any moves twice the bytes of an i64.
    // 10k elements do (160 KB), which shows the per-element work instead.
    for n in [N, 10_000] {
        let v: Vec<i64> = (0..n).collect();
        let a: Array<i64> = (0..n).collect();
        let reps = N / n;
        let vec_sum = time(N, || {
            for _ in 0..reps {
                black_box(black_box(&v).iter().sum::<i64>());
            }
        });
        let array_sum = time(N, || {
            for _ in 0..reps {
                black_box(black_box(&a).iter().sum::<i64>());
            }
        });
        let array_index_sum = time(N, || {
            for _ in 0..reps {
                let a = black_box(&a);
                let mut s = 0i64;
                for i in 0..a.len() {
                    s += a[i];
                }
                black_box(s);
            }
        });
        report(&format!("Array<i64>::iter().sum(), {} elements", n), array_sum, "Vec<i64>::iter().sum()", vec_sum);
        report(&format!("Array<i64> a[i] loop sum, {} elements", n), array_index_sum, "Vec<i64>::iter().sum()", vec_sum);
    }
}

fn call() {
    let f = Function::from_packed("bench.add", |args: &[AnyView]| Ok(Any::from(args[0].to::<i64>()? + args[1].to::<i64>()?))).unwrap();
    let closure = |a: i64, b: i64| a + b;
    let dyn_fn: &dyn Fn(i64, i64) -> i64 = black_box(&closure);
    const CALLS: i64 = 1_000_000;
    let dyn_call = time(CALLS, || {
        let mut s = 0;
        for i in 0..CALLS {
            s += dyn_fn(black_box(i), black_box(2));
        }
        black_box(s);
    });
    let packed_call = time(CALLS, || {
        let mut s = 0;
        for i in 0..CALLS {
            let r = f.call(&[AnyView::from(black_box(i)), AnyView::from(black_box(2i64))]).unwrap();
            s += i64::try_from(&r).unwrap();
        }
        black_box(s);
    });
    report("Function::call (Rust closure, 2 ints)", packed_call, "&dyn Fn(i64, i64) call", dyn_call);
    println!("{:<44} {:>+9.3} ns over the &dyn Fn call", "  difference", packed_call - dyn_call);
}

ffikit::reflected_type! {
    /// The benchmark's reflected type, defined in Rust.
    #[type_key = "bench.Point", layout = PointLayout]
    pub struct Point {
        #[writable(set_x)]
        x: f64 = 0.0,
        #[writable(set_label)]
        label: String = "p".to_string(),
    }
}

/// Field reads of a type defined with `reflected_type!`: the typed getter (an atomic load at
/// the offset), a `FieldInfo` fetched once (`ffk_field_get`), by name (`ffk_object_get_field`:
/// a lookup per read), and a write through the setter, beside a plain struct field read.
fn fields() {
    struct Plain {
        x: f64,
    }
    const READS: i64 = 1_000_000;
    let plain = black_box(Plain { x: 1.5 });
    let p = Point::new(1.5, "p".into()).unwrap();
    let plain_read = time(READS, || {
        let mut s = 0.0;
        for _ in 0..READS {
            s += black_box(&plain).x;
        }
        black_box(s);
    });
    let typed = time(READS, || {
        let mut s = 0.0;
        for _ in 0..READS {
            s += black_box(&p).x();
        }
        black_box(s);
    });
    let x = Point::type_info().unwrap().field("x").unwrap();
    let handle = time(READS, || {
        let mut s = 0.0;
        for _ in 0..READS {
            s += x.get::<f64, _>(black_box(&p)).unwrap();
        }
        black_box(s);
    });
    let by_name = time(READS, || {
        let mut s = 0.0;
        for _ in 0..READS {
            s += black_box(&p).field::<f64>("x").unwrap();
        }
        black_box(s);
    });
    let str_read = time(READS, || {
        for _ in 0..READS {
            black_box(black_box(&p).label().unwrap());
        }
    });
    let set = time(READS, || {
        for i in 0..READS {
            p.set_x(black_box(i as f64)).unwrap();
        }
    });
    report("Point::x() (typed getter, reflected_type!)", typed, "plain struct field read", plain_read);
    report("FieldInfo::get::<f64> (handle fetched once)", handle, "plain struct field read", plain_read);
    report("obj.field::<f64>(\"x\") (by name)", by_name, "plain struct field read", plain_read);
    report("Point::label() (str field, through C)", str_read, "plain struct field read", plain_read);
    report("Point::set_x (through C)", set, "plain struct field read", plain_read);
}

ffikit::reflected_type! {
    /// A tree node for the structural section.
    #[type_key = "bench.TreeNode", layout = TreeNodeLayout]
    pub struct TreeNode {
        v: i64,
        name: String,
        kids: Array<Any>,
    }
}

/// The Rust peer of `TreeNode`: derived equality and hashing, a derived deep clone.
#[derive(Clone, PartialEq, Eq, Hash)]
struct PlainNode {
    v: i64,
    name: String,
    kids: Vec<PlainNode>,
}

const TREE_NODES: i64 = 10_000;

/// A 4-ary tree of `n` nodes numbered from `*next` (breadth grows with depth).
fn tree(n: i64, next: &mut i64) -> (TreeNode, PlainNode) {
    let v = *next;
    *next += 1;
    let name = format!("node{}", v);
    let rest = n - 1;
    let (mut kids, mut plain_kids) = (Vec::new(), Vec::new());
    for i in 0..4 {
        let size = rest / 4 + i64::from(i < rest % 4);
        if size > 0 {
            let (k, p) = tree(size, next);
            kids.push(Any::from(&k));
            plain_kids.push(p);
        }
    }
    let node = TreeNode::new(v, name.clone(), kids.into()).unwrap();
    (node, PlainNode { v, name, kids: plain_kids })
}

/// Two equal trees of 10,000 reflected nodes (the benchmark shape): structural
/// equality, hash, deep copy and the JSON graph both ways, beside derived Rust equality,
/// hashing and clone of the same tree as plain structs (no Rust peer writes the graph
/// format; the clone is the yardstick for a walk that builds a tree).
fn structural() {
    use std::hash::{Hash, Hasher};
    let (a, pa) = tree(TREE_NODES, &mut 0);
    let (b, pb) = tree(TREE_NODES, &mut 0);
    assert!(ffikit::structural_eq(&a, &b).unwrap());
    let eq = time(TREE_NODES, || assert!(ffikit::structural_eq(black_box(&a), black_box(&b)).unwrap()));
    let plain_eq = time(TREE_NODES, || assert!(black_box(&pa) == black_box(&pb)));
    let hash = time(TREE_NODES, || {
        black_box(ffikit::structural_hash(black_box(&a)).unwrap());
    });
    let plain_hash = time(TREE_NODES, || {
        let mut h = std::collections::hash_map::DefaultHasher::new();
        black_box(&pa).hash(&mut h);
        black_box(h.finish());
    });
    let copy = time(TREE_NODES, || {
        black_box(ffikit::deep_copy(black_box(&a)).unwrap());
    });
    let plain_clone = time(TREE_NODES, || {
        black_box(black_box(&pa).clone());
    });
    let text = ffikit::to_json_graph(&a, None).unwrap();
    let to_json = time(TREE_NODES, || {
        black_box(ffikit::to_json_graph(black_box(&a), None).unwrap());
    });
    let from_json = time(TREE_NODES, || {
        black_box(ffikit::from_json_graph(black_box(&text)).unwrap());
    });
    println!("tree of {} reflected nodes; the JSON graph is {} bytes; times are per node", TREE_NODES, text.len());
    report("structural_eq (two equal trees)", eq, "derive(PartialEq)", plain_eq);
    report("structural_hash", hash, "derive(Hash), DefaultHasher", plain_hash);
    report("deep_copy", copy, "derive(Clone)", plain_clone);
    report("to_json_graph", to_json, "derive(Clone)", plain_clone);
    report("from_json_graph", from_json, "derive(Clone)", plain_clone);
}

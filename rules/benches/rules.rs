//! Rules-core benchmarks: random playouts (the MCTS workload), perft(5) and move generation.
//!
//! `cargo bench -p emergo-rules` — criterion prints time per iteration; playouts/s is
//! 1 / (time per playout). `emergo bench` prints playouts/s directly.

use std::hint::black_box;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use emergo_rules::{MoveList, Position, Repetitions, perft, playout_rng, random_playout};

fn playouts(c: &mut Criterion) {
    let mut group = c.benchmark_group("playout");
    group.throughput(Throughput::Elements(1));
    let start = Position::initial();
    let base = Repetitions::new(&start);
    let mut rng = playout_rng(1);
    let mut reps = Repetitions::default();
    group.bench_function("uniform_random_from_initial_cap400", |b| {
        b.iter(|| {
            let mut pos = start;
            reps.copy_from(&base);
            let p = random_playout(&mut pos, &mut reps, &mut rng, 400);
            assert!(p.turns > 0);
            black_box(p)
        })
    });
    group.finish();
}

fn perft5(c: &mut Criterion) {
    let mut group = c.benchmark_group("perft");
    group.sample_size(10);
    let pos = Position::initial();
    group.bench_function("initial_depth5", |b| {
        b.iter(|| {
            let n = perft(black_box(&pos), 5);
            assert_eq!(n, 59_056_880);
            n
        })
    });
    group.finish();
}

fn movegen(c: &mut Criterion) {
    // A capture-heavy middle game and a quiet one.
    let positions: Vec<Position> = [
        "9/9/2a@1a@4/9/2bb1a@4/3C@5/9/9/9 w 31 0,0",
        "A@1AA1A@1A@1a@/9/A@7a@/9/8aa/1aa7/ab5aa1AC/1AA7/4a@4 w 38 0,0",
        "8a@/3a@5/A@1a@6/9/6A@2/9/9/1A@7/9 w 6 9,9",
    ]
    .iter()
    .map(|f| f.parse().unwrap())
    .collect();
    let mut list = MoveList::new();
    c.bench_function("legal_moves_3_positions", |b| {
        b.iter(|| {
            let mut n = 0;
            for p in &positions {
                p.legal_moves_into(&mut list);
                n += list.len();
            }
            assert_eq!(n, 1 + 14 + 30);
            n
        })
    });
}

criterion_group!(benches, playouts, perft5, movegen);
criterion_main!(benches);

//! The tree's memory: an arena of nodes and an arena of edges, addressed by `u32` indices, under
//! a node cap and a byte limit, and compaction (tree reuse, reclaiming a full tree).
//!
//! Each arena is a fixed directory of chunks (128 KiB each), allocated on first use. An element
//! never moves once allocated (the directory never grows; chunks are never reallocated), so
//! threads hold plain references while others allocate. Space is reserved by advancing atomic
//! counters with compare-exchange loops that refuse to pass the limits: the tree can never
//! exceed them, and reserving is lock-free. Only the first use of a chunk takes `OnceLock`'s
//! internal lock (once per chunk; not on the hot path).
//!
//! # Memory
//!
//! An expanded node costs its 32-byte [`Node`] plus 8 bytes per legal move ([`Edge`]); its
//! children's nodes exist only once visited. Elements are never freed individually: tree reuse
//! and reclaiming ([`Tree::compact`]) copy what is kept into a fresh tree, and the old one is
//! freed as a whole. So that the old and the new tree together stay within
//! [`TreeLimits::max_bytes`], a tree fills at most 3/4 of it ([`TreeLimits::usable_bytes`]),
//! leaving the last quarter for the copy a reclaim keeps.

use std::collections::VecDeque;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicUsize, Ordering};

use crate::node::{Child, Edge, Expansion, Node};

/// Bytes per chunk of either arena.
const CHUNK_BYTES: usize = 128 << 10;

/// Index of a fresh tree's root node (a tree re-rooted in place has its root elsewhere, see
/// [`Tree::set_root`]).
pub(crate) const ROOT: u32 = 0;

/// Bytes of one node.
pub(crate) const NODE_BYTES: usize = std::mem::size_of::<Node>();
/// Bytes of one edge.
pub(crate) const EDGE_BYTES: usize = std::mem::size_of::<Edge>();
/// Bytes of one directory slot.
const SLOT_BYTES: usize = std::mem::size_of::<OnceLock<Box<[Node]>>>();

/// The limits a tree lives under.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) struct TreeLimits {
    /// Most nodes, root included (at least 1).
    pub(crate) max_nodes: u32,
    /// Most bytes the tree may hold, a copy made by compaction included.
    pub(crate) max_bytes: usize,
}

impl TreeLimits {
    /// Bytes the elements of one tree may take: 3/4 of the limit, less the chunk and directory
    /// overhead (so that what is allocated stays within 3/4 too).
    pub(crate) fn usable_bytes(&self) -> usize {
        (self.max_bytes / 4 * 3).saturating_sub(self.overhead())
    }

    /// Most nodes and edges.
    fn caps(&self) -> (u32, u32) {
        let usable = self.usable_bytes();
        let nodes = u32::try_from((usable / NODE_BYTES).max(1)).unwrap_or(u32::MAX);
        let edges = u32::try_from(usable / EDGE_BYTES).unwrap_or(u32::MAX);
        (self.max_nodes.max(1).min(nodes), edges)
    }

    /// Directory slots of the node arena.
    fn node_slots(&self) -> usize {
        let by_bytes = self.max_bytes / NODE_BYTES;
        (self.max_nodes as usize)
            .min(by_bytes.max(1))
            .div_ceil(CHUNK_BYTES / NODE_BYTES)
    }

    /// Directory slots of the edge arena.
    fn edge_slots(&self) -> usize {
        (self.max_bytes / EDGE_BYTES).div_ceil(CHUNK_BYTES / EDGE_BYTES)
    }

    /// Memory besides the elements: directories, and one partly used chunk per arena.
    fn overhead(&self) -> usize {
        (self.node_slots() + self.edge_slots()) * SLOT_BYTES + 2 * CHUNK_BYTES
    }
}

/// log2 of the `T`s per chunk (at least one per chunk; a zero-sized `T` counts as one byte).
const fn chunk_bits<T>() -> u32 {
    let size = std::mem::size_of::<T>();
    let per_chunk = CHUNK_BYTES / if size == 0 { 1 } else { size };
    if per_chunk == 0 { 0 } else { per_chunk.ilog2() }
}

/// One arena (see the module docs).
struct Arena<T> {
    /// One slot per chunk the limits allow; each filled the first time a reservation reaches it.
    /// The thread that reserves a block initialises its chunks (`get_or_init`, release) before
    /// publishing the block (through a node's `expansion` or an edge), so readers always find
    /// them.
    chunks: Box<[OnceLock<Box<[T]>>]>,
    /// Elements handed out. Only grows, never above `cap`.
    len: AtomicU32,
    /// Most elements handed out (may be lowered and raised again up to `alloc_cap`).
    cap: u32,
    /// Most elements the arena was made for: chunks are cut to it, so it never changes.
    alloc_cap: u32,
}

impl<T: Default> Arena<T> {
    /// log2 of the elements per chunk: a constant, so that every element lookup (selection
    /// makes one per child it scores) shifts and masks by immediates.
    const CHUNK_BITS: u32 = chunk_bits::<T>();

    fn new(cap: u32, slots: usize) -> Self {
        let cap = cap.min(u32::try_from(slots << Self::CHUNK_BITS).unwrap_or(u32::MAX));
        Arena {
            chunks: (0..slots).map(|_| OnceLock::new()).collect(),
            len: AtomicU32::new(0),
            cap,
            alloc_cap: cap,
        }
    }

    /// The `count` elements from `first`, if they lie in one chunk (they nearly always do).
    #[inline]
    fn block(&self, first: u32, count: u32) -> Option<&[T]> {
        let mask = (1u32 << Self::CHUNK_BITS) - 1;
        let offset = (first & mask) as usize;
        let chunk = self
            .chunks
            .get((first >> Self::CHUNK_BITS) as usize)?
            .get()?;
        chunk.get(offset..offset + count as usize)
    }

    #[inline]
    fn get(&self, index: u32) -> &T {
        let mask = (1u32 << Self::CHUNK_BITS) - 1;
        match self.chunks[(index >> Self::CHUNK_BITS) as usize].get() {
            Some(chunk) => &chunk[(index & mask) as usize],
            None => unreachable!("element {index} read before it was reserved"),
        }
    }

    /// Reserves `count` (> 0) contiguous fresh elements; the first index, or `None` if they do
    /// not fit. Newly allocated chunk bytes are added to `allocated`.
    fn reserve(&self, count: u32, allocated: &AtomicUsize) -> Option<u32> {
        let first = self
            .len
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |len| {
                len.checked_add(count).filter(|&end| end <= self.cap)
            })
            .ok()?;
        let last = first + count - 1;
        for chunk in (first >> Self::CHUNK_BITS)..=(last >> Self::CHUNK_BITS) {
            self.chunks[chunk as usize].get_or_init(|| {
                let size =
                    (self.alloc_cap - (chunk << Self::CHUNK_BITS)).min(1 << Self::CHUNK_BITS);
                allocated.fetch_add(size as usize * std::mem::size_of::<T>(), Ordering::Relaxed);
                (0..size).map(|_| T::default()).collect()
            });
        }
        Some(first)
    }

    fn len(&self) -> u32 {
        self.len.load(Ordering::Relaxed)
    }

    /// Most elements the arena was made for.
    fn capacity(&self) -> u32 {
        self.alloc_cap
    }
}

/// The tree's memory (see the module docs).
pub(crate) struct Tree {
    nodes: Arena<Node>,
    edges: Arena<Edge>,
    /// Element bytes reserved (nodes and edges); never above `usable` for long (a reservation
    /// adds first and takes back what did not fit).
    used: AtomicUsize,
    /// The limit on `used`.
    usable: usize,
    /// Chunk and directory bytes allocated.
    allocated: AtomicUsize,
    limits: TreeLimits,
    /// Set (relaxed, a hint) once a reservation failed for lack of room.
    cap_reached: AtomicBool,
    /// The root's index: [`ROOT`] in a fresh tree, a former descendant's after
    /// [`Tree::set_root`]. Changed only with exclusive access (between searches).
    root: u32,
}

/// Summarised: printing millions of nodes helps nobody.
impl std::fmt::Debug for Tree {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tree")
            .field("nodes", &self.nodes.len())
            .field("edges", &self.edges.len())
            .field("bytes", &self.memory_bytes())
            .field("limits", &self.limits)
            .field("cap_reached", &self.cap_reached())
            .field("root", &self.root)
            .finish_non_exhaustive()
    }
}

impl Tree {
    /// A tree holding just a fresh root, under `limits`.
    pub(crate) fn new(limits: TreeLimits) -> Self {
        let limits = TreeLimits {
            max_nodes: limits.max_nodes.max(1),
            ..limits
        };
        let node_slots = limits.node_slots().max(1);
        let edge_slots = limits.edge_slots();
        let usable = limits.usable_bytes();
        let (node_cap, edge_cap) = limits.caps();
        let tree = Tree {
            nodes: Arena::new(node_cap, node_slots),
            edges: Arena::new(edge_cap, edge_slots),
            used: AtomicUsize::new(0),
            usable,
            allocated: AtomicUsize::new((node_slots + edge_slots) * SLOT_BYTES),
            limits,
            cap_reached: AtomicBool::new(false),
            root: ROOT,
        };
        // The root always exists, whatever the limits.
        let root = tree.nodes.reserve(1, &tree.allocated);
        debug_assert_eq!(root, Some(ROOT));
        tree.used.store(NODE_BYTES, Ordering::Relaxed);
        tree
    }

    /// The limits the tree was made for.
    pub(crate) fn limits(&self) -> TreeLimits {
        self.limits
    }

    /// The node at `index`.
    ///
    /// # Panics
    ///
    /// If `index` was never reserved: indices only come from the root and from published
    /// edges, so this is a bug in this crate.
    pub(crate) fn node(&self, index: u32) -> &Node {
        self.nodes.get(index)
    }

    /// The edge at `index` (same contract as [`Tree::node`]).
    pub(crate) fn edge(&self, index: u32) -> &Edge {
        self.edges.get(index)
    }

    /// The edges `first..first + count` as a slice, if they lie in one chunk of the arena
    /// (an expansion's edges nearly always do); selection reads them in one go.
    #[inline]
    pub(crate) fn edge_block(&self, first: u32, count: u32) -> Option<&[Edge]> {
        self.edges.block(first, count)
    }

    /// Loads the counters of every child node behind `edges`, in a loop that does nothing
    /// else, so that the processor has many of those scattered loads in flight at once;
    /// selection, which then scores the children one by one with far more work per child,
    /// finds them in the first-level cache.
    #[inline]
    pub(crate) fn warm_children(&self, edges: &[Edge]) {
        let mut sum = 0u64;
        for edge in edges {
            if let Child::Node(index) = edge.read_codes().child {
                sum = sum.wrapping_add(self.node(index).touch());
            }
        }
        std::hint::black_box(sum);
    }

    /// The root node.
    pub(crate) fn root(&self) -> &Node {
        self.node(self.root)
    }

    /// The root node's index.
    pub(crate) fn root_index(&self) -> u32 {
        self.root
    }

    /// Makes the node at `index` (an expanded descendant of the root) the root, in place: the
    /// rest of the tree stays allocated, unreachable, until a compaction copies the new root's
    /// subtree out ([`Tree::compact`], the reclaim of a full tree). So re-rooting costs the
    /// same whatever the tree's size, and the tree's bytes stay what they were (exactly what
    /// its memory grant pays for). The new root's refinements are forgotten: its moves'
    /// knowledge depends on the distance from the root. Why: docs/DECISIONS.md, "Kept trees
    /// are re-rooted in place".
    pub(crate) fn set_root(&mut self, index: u32) {
        self.node(index).reset_refinement();
        self.root = index;
    }

    /// Nodes of the arena that are no longer reachable from the root (left by
    /// [`Tree::set_root`]); 0 in a tree that was never re-rooted in place. Walks the root's
    /// subtree.
    pub(crate) fn unreachable_nodes(&self) -> u64 {
        (self.len() as u64).saturating_sub(self.subtree_len(self.root))
    }

    /// Number of nodes, root included.
    pub(crate) fn len(&self) -> usize {
        self.nodes.len() as usize
    }

    /// Bytes allocated: chunks and directories.
    pub(crate) fn memory_bytes(&self) -> usize {
        self.allocated.load(Ordering::Relaxed)
    }

    /// Element bytes in use.
    fn used_bytes(&self) -> usize {
        self.used.load(Ordering::Relaxed)
    }

    /// Whether a reservation has failed for lack of room.
    pub(crate) fn cap_reached(&self) -> bool {
        self.cap_reached.load(Ordering::Relaxed)
    }

    /// Takes `bytes` from the byte budget, or records that the tree is full.
    fn take_bytes(&self, bytes: usize) -> bool {
        let taken = self
            .used
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |used| {
                used.checked_add(bytes)
                    .filter(|&total| total <= self.usable)
            })
            .is_ok();
        if !taken {
            self.cap_reached.store(true, Ordering::Relaxed);
        }
        taken
    }

    /// Reserves one fresh node; its index, or `None` (and the tree is marked full).
    pub(crate) fn reserve_node(&self) -> Option<u32> {
        self.reserve_in(&self.nodes, 1)
    }

    /// Reserves `count` (> 0) contiguous fresh edges; the first index, or `None` (and the tree
    /// is marked full).
    pub(crate) fn reserve_edges(&self, count: u32) -> Option<u32> {
        self.reserve_in(&self.edges, count)
    }

    /// Reserves `count` elements of `arena`: bytes from the budget first, then the slots (their
    /// own cap may still refuse, and then the bytes are given back).
    fn reserve_in<T: Default>(&self, arena: &Arena<T>, count: u32) -> Option<u32> {
        let bytes = count as usize * std::mem::size_of::<T>();
        if !self.take_bytes(bytes) {
            return None;
        }
        let first = arena.reserve(count, &self.allocated);
        if first.is_none() {
            self.used.fetch_sub(bytes, Ordering::Relaxed);
            self.cap_reached.store(true, Ordering::Relaxed);
        }
        first
    }

    /// Creates the child node of edge `edge` if nobody has, and returns it: `Ok(index)`, or
    /// `Err(Child::Creating)` when another thread is creating it right now (retry in a moment),
    /// or `Err(Child::Absent)` when the tree is full. `init` prepares the fresh node before it is
    /// published. Counts a lost compare-exchange in `cas_failures`.
    pub(crate) fn child_of(
        &self,
        edge: u32,
        init: impl FnOnce(&Node),
        cas_failures: &mut u64,
    ) -> Result<u32, Child> {
        let e = self.edge(edge);
        match e.read().child {
            Child::Node(index) => return Ok(index),
            Child::Creating => return Err(Child::Creating),
            Child::Absent => {}
        }
        if !e.try_begin_create() {
            *cas_failures += 1;
            return match e.read().child {
                Child::Node(index) => Ok(index),
                _ => Err(Child::Creating),
            };
        }
        match self.reserve_node() {
            Some(index) => {
                init(self.node(index));
                e.publish_child(index);
                Ok(index)
            }
            None => {
                e.abort_create();
                Err(Child::Absent)
            }
        }
    }

    /// Changes the limits in place if the tree's arenas can take them and it holds no more than
    /// they allow; false if a compaction is needed instead.
    pub(crate) fn try_set_limits(&mut self, limits: TreeLimits) -> bool {
        let (node_cap, edge_cap) = limits.caps();
        let fits = node_cap <= self.nodes.capacity()
            && edge_cap <= self.edges.capacity()
            && self.nodes.len() <= node_cap
            && self.edges.len() <= edge_cap
            && self.used_bytes() <= limits.usable_bytes();
        if fits {
            self.nodes.cap = node_cap;
            self.edges.cap = edge_cap;
            self.usable = limits.usable_bytes();
            self.limits = limits;
            *self.cap_reached.get_mut() = false;
        }
        fits
    }

    /// Copies the subtree under `from` into a fresh tree under `limits`, `from` becoming its
    /// root, keeping at most about `budget` bytes and `max_nodes` nodes: the expansions of the
    /// most visited nodes are kept (those with at least a visit threshold chosen to fit), the
    /// others become leaves that keep their own statistics and solver bounds. Breadth-first, so
    /// each node's edges stay contiguous. Returns the tree and the nodes left out. Must not run
    /// concurrently with a search on `self`.
    pub(crate) fn compact(
        &self,
        from: u32,
        limits: TreeLimits,
        budget: CompactionBudget,
    ) -> (Tree, u64) {
        let fresh = Tree::new(limits);
        let threshold = self.keep_threshold(from, budget);
        fresh.root().copy_from(self.node(from));
        if from != self.root {
            // The root's knowledge depends on its distance from the root (deeper searches
            // there): a new root is asked again.
            fresh.root().reset_refinement();
        }
        let mut queue = VecDeque::from([(from, ROOT)]);
        while let Some((old, new)) = queue.pop_front() {
            let old_node = self.node(old);
            let Expansion::Expanded { first, count } = old_node.expansion() else {
                // An interrupted expansion cannot outlive a search; either way it is a leaf.
                continue;
            };
            if count == 0 {
                fresh.node(new).publish_expanded(0, 0);
                continue;
            }
            if old != from && old_node.stats().visits < threshold {
                continue;
            }
            let Some(new_first) = fresh.reserve_edges(count) else {
                continue;
            };
            for i in 0..count {
                let (old_edge, new_edge) = (self.edge(first + i), fresh.edge(new_first + i));
                new_edge.copy_knowledge(old_edge);
                if let Some(old_child) = old_edge.child() {
                    let Some(new_child) = fresh.reserve_node() else {
                        continue;
                    };
                    fresh.node(new_child).copy_from(self.node(old_child));
                    new_edge.set_child(new_child);
                    queue.push_back((old_child, new_child));
                }
            }
            fresh.node(new).publish_expanded(new_first, count);
        }
        // Filling a fresh copy is not a search event.
        fresh.cap_reached.store(false, Ordering::Relaxed);
        let dropped = self.subtree_len(from).saturating_sub(fresh.len() as u64);
        (fresh, dropped)
    }

    /// Nodes in the subtree under `from`, `from` included.
    fn subtree_len(&self, from: u32) -> u64 {
        if from == ROOT && self.root == ROOT {
            return self.len() as u64;
        }
        let mut count = 0;
        self.for_each_expanded(from, |_, _, _| {}, &mut count);
        count
    }

    /// Calls `visit(node, edges, children)` for every expanded node under `from` (depth first),
    /// counting every node in `count`.
    fn for_each_expanded(
        &self,
        from: u32,
        mut visit: impl FnMut(&Node, u32, u32),
        count: &mut u64,
    ) {
        let mut stack = vec![from];
        while let Some(index) = stack.pop() {
            *count += 1;
            let node = self.node(index);
            if let Expansion::Expanded { first, count } = node.expansion() {
                let before = stack.len();
                stack.extend((first..first + count).filter_map(|e| self.edge(e).child()));
                let children = (stack.len() - before) as u32;
                visit(node, count, children);
            }
        }
    }

    /// The smallest visit count such that keeping the expansions of the nodes under `from` with
    /// at least that many visits (and always `from`'s own) fits `budget`. Visits only shrink
    /// going down the tree, so the kept part is connected. Buckets by powers of two: one pass.
    fn keep_threshold(&self, from: u32, budget: CompactionBudget) -> u64 {
        // Per bucket b (visits in [2^(b-1), 2^b)): bytes and nodes its expansions keep.
        let mut bytes = [0usize; 65];
        let mut nodes = [0u64; 65];
        let mut count = 0;
        let root = self.node(from);
        let mut mandatory = (NODE_BYTES, 1u64);
        self.for_each_expanded(
            from,
            |node, edges, children| {
                let cost = edges as usize * EDGE_BYTES + children as usize * NODE_BYTES;
                if std::ptr::eq(node, root) {
                    mandatory.0 += cost;
                    mandatory.1 += u64::from(children);
                } else {
                    let bucket = (64 - node.stats().visits.leading_zeros()) as usize;
                    bytes[bucket] += cost;
                    nodes[bucket] += u64::from(children);
                }
            },
            &mut count,
        );
        let (mut total_bytes, mut total_nodes) = mandatory;
        let mut threshold = u64::MAX;
        for bucket in (1..65).rev() {
            total_bytes += bytes[bucket];
            total_nodes += nodes[bucket];
            if total_bytes > budget.bytes || total_nodes > budget.nodes {
                break;
            }
            threshold = 1u64 << (bucket - 1);
        }
        threshold
    }

    /// What a reclaim of this full tree keeps: a third of it, and no more than fits beside it
    /// within the byte limit.
    pub(crate) fn reclaim_budget(&self) -> CompactionBudget {
        let room = self.limits.max_bytes.saturating_sub(self.memory_bytes());
        CompactionBudget {
            bytes: (self.used_bytes() / 3).min(room.saturating_sub(self.limits.overhead())),
            nodes: self.len() as u64 / 3,
        }
    }

    /// What tree reuse may keep: whatever fits beside this tree within the byte limit.
    pub(crate) fn reuse_budget(&self, limits: TreeLimits) -> CompactionBudget {
        let room = limits.max_bytes.saturating_sub(self.memory_bytes());
        CompactionBudget {
            bytes: room
                .saturating_sub(limits.overhead())
                .min(limits.usable_bytes()),
            nodes: u64::from(limits.max_nodes),
        }
    }
}

/// How much a compaction may keep.
#[derive(Clone, Copy, Debug)]
pub(crate) struct CompactionBudget {
    /// Element bytes.
    pub(crate) bytes: usize,
    /// Nodes.
    pub(crate) nodes: u64,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limits(max_nodes: u32) -> TreeLimits {
        TreeLimits {
            max_nodes,
            max_bytes: 64 << 20,
        }
    }

    #[test]
    fn element_sizes() {
        assert_eq!(NODE_BYTES, 32);
        assert_eq!(EDGE_BYTES, 8);
    }

    #[test]
    fn reservations_respect_the_node_cap_exactly() {
        let tree = Tree::new(limits(10));
        assert_eq!(tree.len(), 1);
        for i in 1..10 {
            assert_eq!(tree.reserve_node(), Some(i));
        }
        assert!(!tree.cap_reached());
        assert_eq!(tree.reserve_node(), None);
        assert!(tree.cap_reached());
        assert_eq!(tree.len(), 10);
    }

    #[test]
    fn reservations_respect_the_byte_limit() {
        let limits = TreeLimits {
            max_nodes: u32::MAX,
            max_bytes: 4 << 20,
        };
        let tree = Tree::new(limits);
        while tree.reserve_edges(100).is_some() {}
        assert!(tree.cap_reached());
        assert!(tree.used_bytes() <= limits.usable_bytes());
        assert!(tree.memory_bytes() <= limits.max_bytes / 4 * 3, "{tree:?}");
        assert!(tree.used_bytes() + 100 * EDGE_BYTES > limits.usable_bytes());
    }

    #[test]
    fn blocks_may_span_chunks() {
        let tree = Tree::new(limits(1000));
        let per_chunk = (CHUNK_BYTES / EDGE_BYTES) as u32;
        let first = tree.reserve_edges(per_chunk - 2).unwrap_or_default();
        let block = tree.reserve_edges(10).unwrap_or_default();
        assert_eq!(block, first + per_chunk - 2);
        tree.edge(block + 9).init(Some(0.5), None);
        assert!(
            (crate::node::prior_of(tree.edge(block + 9).read_codes().prior) - 0.5).abs() < 1e-4
        );
    }

    /// root -> edges a, b, c (a and b visited); a -> edges d, e (d visited).
    fn small_tree() -> Tree {
        let tree = Tree::new(limits(100));
        let visit = |index: u32, times: u32| {
            for _ in 0..times {
                tree.node(index).arrive();
                tree.node(index).leave(1);
            }
        };
        visit(ROOT, 10);
        let edges = tree.reserve_edges(3).unwrap_or_default();
        for i in 0..3 {
            tree.edge(edges + i).init(Some(0.3), Some(0.1 * i as f32));
        }
        let mut fails = 0;
        let a = tree.child_of(edges, |_| {}, &mut fails).unwrap_or_default();
        let b = tree
            .child_of(edges + 1, |_| {}, &mut fails)
            .unwrap_or_default();
        tree.root().publish_expanded(edges, 3);
        visit(a, 6);
        visit(b, 3);
        let a_edges = tree.reserve_edges(2).unwrap_or_default();
        let d = tree
            .child_of(a_edges, |_| {}, &mut fails)
            .unwrap_or_default();
        tree.node(a).publish_expanded(a_edges, 2);
        visit(d, 5);
        tree
    }

    #[test]
    fn compact_keeps_a_subtree() {
        let tree = small_tree();
        let Expansion::Expanded { first, .. } = tree.root().expansion() else {
            panic!("root not expanded");
        };
        let a = tree.edge(first).child().unwrap_or_default();
        let budget = tree.reuse_budget(tree.limits());
        let (kept, dropped) = tree.compact(a, tree.limits(), budget);
        assert_eq!(kept.len(), 2);
        assert_eq!(dropped, 0);
        assert_eq!(kept.root().stats().visits, 6);
        let Expansion::Expanded { first, count } = kept.root().expansion() else {
            panic!("kept root not expanded");
        };
        assert_eq!(count, 2);
        let d = kept.edge(first).child().unwrap_or_default();
        assert_eq!(kept.node(d).stats().visits, 5);
        assert_eq!(kept.edge(first + 1).child(), None);
        assert!(crate::node::prior_of(kept.edge(first + 1).read_codes().prior).abs() < 1e-9);
    }

    #[test]
    fn compact_drops_the_least_visited_expansions_first() {
        let tree = small_tree();
        // Room for the root's expansion only: a becomes a leaf with its statistics.
        let budget = CompactionBudget {
            bytes: NODE_BYTES * 3 + EDGE_BYTES * 3,
            nodes: 100,
        };
        let (kept, dropped) = tree.compact(ROOT, tree.limits(), budget);
        assert_eq!(kept.len(), 3);
        assert_eq!(dropped, 1);
        let Expansion::Expanded { first, count: 3 } = kept.root().expansion() else {
            panic!("root not expanded");
        };
        let a = kept.edge(first).child().unwrap_or_default();
        assert_eq!(kept.node(a).expansion(), Expansion::Empty);
        assert_eq!(kept.node(a).stats().visits, 6);
        // The values survive the copy.
        let value = kept.edge(first + 2).read().value.unwrap_or_default();
        assert!((value - 0.2).abs() < 1e-4);
        // With room for everything, everything stays.
        let (all, dropped) = tree.compact(ROOT, tree.limits(), tree.reuse_budget(tree.limits()));
        assert_eq!((all.len(), dropped), (4, 0));
    }

    #[test]
    fn limits_change_in_place_when_they_fit() {
        let mut tree = small_tree();
        let smaller = TreeLimits {
            max_nodes: 50,
            max_bytes: 16 << 20,
        };
        assert!(tree.try_set_limits(smaller));
        assert_eq!(tree.limits(), smaller);
        let larger = TreeLimits {
            max_nodes: 1000,
            max_bytes: 1 << 30,
        };
        assert!(!tree.try_set_limits(larger));
        assert!(!tree.try_set_limits(TreeLimits {
            max_nodes: 2,
            ..smaller
        }));
    }
}

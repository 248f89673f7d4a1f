//! Which member of the ring an object belongs to, by hashing: the same answer on every replica
//! that sees the same members, with no coordination.
//!
//! Two layouts place the objects ([`Layout`]); the members agree on one through their Leases:
//!
//! - [`Layout::Rendezvous`] (highest random weight): an object belongs to the member whose
//!   score for it, a hash of the object's and the member's, is highest. Each object lands on
//!   each member with the same chance, independently of the others, so a share differs from
//!   1/N only by the objects' own spread: with three members and 3,000 objects the largest share
//!   is 2.3% above a third in the median ring and 5.7% in the 95th percentile. A lookup
//!   computes a score per member (a few nanoseconds each).
//! - [`Layout::VirtualNodes`], the layout of the first versions: every member is placed on a
//!   circle of 64-bit hashes [`Ring::DEFAULT_VIRTUAL_NODES`] times, and an object belongs to
//!   the member of the first point at or after its own hash. The arcs add a spread of their own
//!   (about 1/√400 = 5% of a share): the largest of three shares is about 5% above a third in
//!   the median ring and 11% in the 95th percentile. The replica with the largest share sets the
//!   memory each replica needs.
//!
//! In both, a member that joins takes about 1/(N+1) of the objects, all from the others, and a
//! member that leaves hands over exactly its own.
//!
//! A member can be *silent* ([`Ring::silence`]): still in the ring, so its objects stay its own,
//! but given no new ones: they go where they would go if it had left, for the objects that
//! have no member yet. The members' view counts a member silent when its Lease has not been
//! renewed for a few retry periods (`super::members`), long before the Lease expires.
//!
//! The hash is written here rather than taken from the standard library: every replica, of
//! every version of the operator that may run side by side during a rollout, must place the
//! members and the objects at the same points, and `std`'s hashers promise no stable output.
//! FNV-1a (a dozen lines, well known) with MurmurHash3's 64-bit finalizer, which FNV lacks: FNV
//! alone places `member#1`, `member#2` … at nearby points, and the shares drift far from 1/N.

use std::cmp::Reverse;
use std::collections::BTreeSet;

/// How a ring places the objects on its members: part of the protocol between replicas, so
/// each member's Lease says the newest layout its replica knows ([`Layout::label`]), and the
/// ring of a view takes the oldest of its members' ([`Layout::common`]). During a rollout from
/// a version that knew only virtual nodes, the ring keeps them until the last replica of that
/// version has left; then the objects move to their rendezvous members once, by drains.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord)]
pub enum Layout {
    /// A circle of [`Ring::DEFAULT_VIRTUAL_NODES`] points per member (the first versions' only
    /// layout: a Lease without the layout label).
    VirtualNodes,
    /// Highest random weight: each object to the member with the highest score for it.
    #[default]
    Rendezvous,
}

impl Layout {
    /// The newest layout this version knows: what its Leases say.
    pub const NEWEST: Layout = Layout::Rendezvous;

    /// The value of the layout label of a Lease for this layout.
    pub fn label(self) -> &'static str {
        match self {
            Layout::VirtualNodes => "virtual-nodes",
            Layout::Rendezvous => "rendezvous",
        }
    }

    /// The newest layout that the replica of a Lease with this layout label knows: none is the
    /// first versions' (virtual nodes); a value this version does not know is a newer version's,
    /// which knows every older layout, so this version's newest will do.
    pub fn of_label(label: Option<&str>) -> Layout {
        match label {
            None => Layout::VirtualNodes,
            Some(label) => [Layout::VirtualNodes, Layout::Rendezvous]
                .into_iter()
                .find(|layout| layout.label() == label)
                .unwrap_or(Layout::NEWEST),
        }
    }

    /// The layout every one of `known` (the newest layouts the members know) can place objects
    /// by: the oldest of them; the newest when there are none.
    pub fn common(known: impl IntoIterator<Item = Layout>) -> Layout {
        known.into_iter().min().unwrap_or(Layout::NEWEST)
    }
}

/// The members of a ring and how it places objects on them.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Ring {
    /// The members, sorted and unique.
    members: Vec<String>,
    /// Whether each of `members` is silent: it is given no key.
    silent: Vec<bool>,
    layout: Layout,
    /// With [`Layout::VirtualNodes`]: `(point, index into members)` of the members that are
    /// not silent, sorted by point.
    points: Vec<(u64, usize)>,
    /// With [`Layout::Rendezvous`]: the hash of each of `members`, from which its scores are
    /// made.
    seeds: Vec<u64>,
}

impl Ring {
    /// How many virtual nodes each member has in [`Layout::VirtualNodes`]. A share varies by
    /// about 1/√400 = 5% of 1/N from one ring to another: with three members (random names,
    /// 3,000 objects) the largest share is 5% above 1/N in the median ring and 11% in the 95th
    /// percentile, where 100 nodes gave 8% and 19%.
    pub const DEFAULT_VIRTUAL_NODES: usize = 400;

    /// A ring of `members` in the newest layout ([`Layout::NEWEST`]). The order of `members` and
    /// duplicates do not matter.
    pub fn new<S: Into<String>>(members: impl IntoIterator<Item = S>) -> Self {
        Self::with_layout(members, Layout::NEWEST)
    }

    /// A ring of `members` placing objects by `layout`.
    pub fn with_layout<S: Into<String>>(
        members: impl IntoIterator<Item = S>,
        layout: Layout,
    ) -> Self {
        match layout {
            Layout::VirtualNodes => Self::with_virtual_nodes(members, Self::DEFAULT_VIRTUAL_NODES),
            Layout::Rendezvous => {
                let members = sorted(members);
                let seeds = members
                    .iter()
                    .map(|member| stable_hash(member.as_bytes()))
                    .collect();
                Ring {
                    silent: vec![false; members.len()],
                    members,
                    layout,
                    points: Vec::new(),
                    seeds,
                }
            }
        }
    }

    /// A ring of `members` in [`Layout::VirtualNodes`] with `virtual_nodes` virtual nodes each
    /// (at least 1).
    pub fn with_virtual_nodes<S: Into<String>>(
        members: impl IntoIterator<Item = S>,
        virtual_nodes: usize,
    ) -> Self {
        let members = sorted(members);
        let mut points = Vec::with_capacity(members.len() * virtual_nodes.max(1));
        for (index, member) in members.iter().enumerate() {
            for node in 0..virtual_nodes.max(1) {
                points.push((stable_hash(format!("{member}#{node}").as_bytes()), index));
            }
        }
        // Two members on one point (a 64-bit collision) are ordered by name: every replica
        // still agrees.
        points.sort_unstable();
        let silent = vec![false; members.len()];
        Ring {
            members,
            silent,
            layout: Layout::VirtualNodes,
            points,
            seeds: Vec::new(),
        }
    }

    /// How this ring places objects.
    pub fn layout(&self) -> Layout {
        self.layout
    }

    /// This ring with `silent` members (those of the ring; others are ignored) silent: still
    /// members, but [`member_for`](Self::member_for) never gives them a key; their keys go to
    /// the members that would have them if they left.
    #[must_use]
    pub fn silence<S: AsRef<str>>(mut self, silent: impl IntoIterator<Item = S>) -> Self {
        for member in silent {
            if let Some(index) = self.index_of(member.as_ref()) {
                self.silent[index] = true;
            }
        }
        let silent = &self.silent;
        self.points.retain(|(_, index)| !silent[*index]);
        self
    }

    /// The members, sorted.
    pub fn members(&self) -> &[String] {
        &self.members
    }

    /// Whether the ring has no member.
    pub fn is_empty(&self) -> bool {
        self.members.is_empty()
    }

    /// Whether `member` is in the ring, silent or not.
    pub fn contains(&self, member: &str) -> bool {
        self.index_of(member).is_some()
    }

    /// Whether `member` is in the ring and silent ([`Ring::silence`]).
    pub fn is_silent(&self, member: &str) -> bool {
        self.index_of(member)
            .is_some_and(|index| self.silent[index])
    }

    /// Whether `member` is in the ring and not silent: the ring may give it keys.
    pub fn takes_keys(&self, member: &str) -> bool {
        self.index_of(member)
            .is_some_and(|index| !self.silent[index])
    }

    /// The members that are silent, sorted.
    pub fn silent(&self) -> impl Iterator<Item = &str> {
        let members = self.members.iter().zip(&self.silent);
        members.filter_map(|(member, silent)| silent.then_some(member.as_str()))
    }

    fn index_of(&self, member: &str) -> Option<usize> {
        self.members
            .binary_search_by(|known| known.as_str().cmp(member))
            .ok()
    }

    /// The member `key` belongs to, never a silent one; `None` when the ring is empty or every
    /// member is silent.
    pub fn member_for(&self, key: &str) -> Option<&str> {
        let hash = stable_hash(key.as_bytes());
        let index = match self.layout {
            Layout::VirtualNodes => {
                let at = self.points.partition_point(|(point, _)| *point < hash);
                self.points.get(at).or_else(|| self.points.first())?.1
            }
            // The highest score wins; scores are distinct for distinct members (`fmix64` is a
            // bijection), and two members of one seed (a 64-bit collision) go by name.
            Layout::Rendezvous => {
                (self.seeds.iter().enumerate())
                    .filter(|(index, _)| !self.silent[*index])
                    .max_by_key(|(index, seed)| (fmix64(hash ^ **seed), Reverse(*index)))?
                    .0
            }
        };
        Some(self.members[index].as_str())
    }
}

/// `members` sorted, without duplicates.
fn sorted<S: Into<String>>(members: impl IntoIterator<Item = S>) -> Vec<String> {
    let members: BTreeSet<String> = members.into_iter().map(Into::into).collect();
    members.into_iter().collect()
}

/// A 64-bit hash of `bytes` that is the same on every platform and in every version: FNV-1a
/// followed by MurmurHash3's `fmix64`, which spreads FNV's output over the whole range.
pub fn stable_hash(bytes: &[u8]) -> u64 {
    const FNV_OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
    const FNV_PRIME: u64 = 0x0000_0100_0000_01b3;
    let mut hash = FNV_OFFSET;
    for byte in bytes {
        hash ^= u64::from(*byte);
        hash = hash.wrapping_mul(FNV_PRIME);
    }
    fmix64(hash)
}

/// MurmurHash3's 64-bit finalizer: a bijection that spreads every input bit over the output.
fn fmix64(mut hash: u64) -> u64 {
    hash ^= hash >> 33;
    hash = hash.wrapping_mul(0xff51_afd7_ed55_8ccd);
    hash ^= hash >> 33;
    hash = hash.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
    hash ^ (hash >> 33)
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;

    /// Object keys as the assigner builds them: `namespace/name`.
    fn keys(count: usize) -> Vec<String> {
        (0..count)
            .map(|i| format!("ns-{}/object-{i}", i % 7))
            .collect()
    }

    fn members(count: usize) -> Vec<String> {
        (0..count)
            .map(|i| format!("manager-7d9f8b6c4-{i:05}-{:016x}", stable_hash(&[i as u8])))
            .collect()
    }

    fn assignment(ring: &Ring, keys: &[String]) -> Vec<String> {
        let owner = |key: &String| ring.member_for(key).unwrap().to_owned();
        keys.iter().map(owner).collect()
    }

    fn shares(assigned: &[String]) -> BTreeMap<&str, usize> {
        let mut shares = BTreeMap::new();
        for member in assigned {
            *shares.entry(member.as_str()).or_default() += 1;
        }
        shares
    }

    /// The hash is part of the protocol between replicas: a change would move objects between
    /// members of different versions during a rollout. These values must never change.
    #[test]
    fn the_hash_is_stable() {
        assert_eq!(stable_hash(b""), 0xefd0_1f60_ba99_2926);
        assert_eq!(stable_hash(b"default/memcached-0"), 0x8930_195b_d540_0092);
    }

    /// Both layouts: the properties below hold for each.
    const LAYOUTS: [Layout; 2] = [Layout::VirtualNodes, Layout::Rendezvous];

    /// Where a few keys go in a ring of three members, in each layout: part of the protocol
    /// between replicas like the hash itself. These values must never change.
    #[test]
    fn the_layouts_are_stable() {
        let keys = [
            "default/memcached-0",
            "default/memcached-1",
            "prod/web-7",
            "a/b",
        ];
        let placed = |layout| {
            let ring = Ring::with_layout(["manager-a", "manager-b", "manager-c"], layout);
            keys.map(|key| ring.member_for(key).unwrap().to_owned())
        };
        assert_eq!(
            placed(Layout::VirtualNodes),
            ["manager-c", "manager-b", "manager-c", "manager-b"]
        );
        assert_eq!(
            placed(Layout::Rendezvous),
            ["manager-a", "manager-b", "manager-c", "manager-c"]
        );
    }

    /// A Lease without the layout label is a first version's (virtual nodes); a label this
    /// version does not know is a newer version's, which knows this version's newest layout;
    /// a ring takes the oldest layout of its members.
    #[test]
    fn the_ring_takes_the_oldest_layout_its_members_know() {
        for layout in LAYOUTS {
            assert_eq!(Layout::of_label(Some(layout.label())), layout);
        }
        assert_eq!(Layout::of_label(None), Layout::VirtualNodes);
        assert_eq!(Layout::of_label(Some("from-the-future")), Layout::NEWEST);
        let mixed = [Layout::Rendezvous, Layout::VirtualNodes, Layout::Rendezvous];
        assert_eq!(Layout::common(mixed), Layout::VirtualNodes);
        assert_eq!(Layout::common([Layout::Rendezvous]), Layout::Rendezvous);
        assert_eq!(Layout::common([]), Layout::NEWEST);
        assert_eq!(Ring::new(["a"]).layout(), Layout::NEWEST);
    }

    #[test]
    fn an_empty_ring_assigns_nothing() {
        for layout in LAYOUTS {
            let ring = Ring::with_layout(Vec::<String>::new(), layout);
            assert!(ring.is_empty());
            assert_eq!(ring.member_for("default/a"), None);
        }
    }

    #[test]
    fn one_member_takes_everything() {
        for layout in LAYOUTS {
            let ring = Ring::with_layout(["only"], layout);
            let keys = keys(1000);
            assert!(keys.iter().all(|key| ring.member_for(key) == Some("only")));
        }
    }

    #[test]
    fn order_and_duplicates_of_members_do_not_matter() {
        let keys = keys(2000);
        for layout in LAYOUTS {
            let a = Ring::with_layout(["a", "b", "c"], layout);
            let b = Ring::with_layout(["c", "a", "b", "a"], layout);
            assert_eq!(a, b);
            assert_eq!(assignment(&a, &keys), assignment(&b, &keys));
            assert!(a.contains("b") && !a.contains("d"));
        }
        assert_ne!(
            Ring::with_layout(["a", "b"], Layout::VirtualNodes),
            Ring::with_layout(["a", "b"], Layout::Rendezvous),
            "a change of layout is a change of the ring"
        );
    }

    /// Each of N members gets about 1/N of the keys, for rings of 2 to 10 members.
    #[test]
    fn shares_are_balanced() {
        let keys = keys(30_000);
        for (layout, count) in LAYOUTS
            .into_iter()
            .flat_map(|l| (2..=10).map(move |c| (l, c)))
        {
            let ring = Ring::with_layout(members(count), layout);
            let assigned = assignment(&ring, &keys);
            let shares = shares(&assigned);
            assert_eq!(shares.len(), count, "every member gets keys");
            let fair = keys.len() as f64 / count as f64;
            for (member, share) in shares {
                let ratio = share as f64 / fair;
                assert!(
                    (0.85..=1.15).contains(&ratio),
                    "{layout:?}: {member} has {share} of {} keys with {count} members ({ratio:.2} of a fair share)",
                    keys.len()
                );
            }
        }
    }

    /// How far above a third the largest share is, over 200 rings of three members with
    /// random names (as replicas name themselves) and 3,000 keys: in the median ring and in the
    /// 95th percentile.
    fn largest_of_three_shares(layout: Layout) -> (f64, f64) {
        let keys: Vec<String> = (0..3000)
            .map(|i| format!("default/memcached-{i}"))
            .collect();
        let third = keys.len() as f64 / 3.0;
        let mut excess: Vec<f64> = (0u64..200)
            .map(|seed| {
                let suffix = |i: u64| format!("{:08x}", stable_hash(&(seed * 3 + i).to_le_bytes()));
                let names = (0..3).map(|i| format!("manager-{i}-{}", suffix(i)));
                let ring = Ring::with_layout(names, layout);
                let assigned = assignment(&ring, &keys);
                let largest = shares(&assigned).into_values().max().unwrap();
                largest as f64 / third - 1.0
            })
            .collect();
        excess.sort_by(f64::total_cmp);
        (excess[100], excess[190])
    }

    /// The largest of three shares stays close to a third: with virtual nodes 4.6% above it in
    /// the median ring and 10.8% in the 95th percentile (8.0% and 19.1% with 100 nodes); by
    /// rendezvous, only the keys' own spread is left: 2.3% and 5.7%.
    #[test]
    fn the_largest_of_three_shares_is_close_to_a_third_in_most_rings() {
        for (layout, median_below, p95_below) in [
            (Layout::VirtualNodes, 0.06, 0.13),
            (Layout::Rendezvous, 0.03, 0.07),
        ] {
            let (median, p95) = largest_of_three_shares(layout);
            assert!(
                median < median_below && p95 < p95_below,
                "{layout:?}: the largest share is {median:.3} above a third in the median ring, {p95:.3} in the 95th percentile"
            );
        }
    }

    /// A member that joins takes about 1/(N+1) of the keys, and every key that moves, moves to
    /// it: none moves between the members that were there.
    #[test]
    fn a_join_moves_about_one_nth_of_the_keys_all_to_the_new_member() {
        for layout in LAYOUTS {
            let keys = keys(30_000);
            for count in 1..=8 {
                let before = Ring::with_layout(members(count), layout);
                let after = Ring::with_layout(members(count + 1), layout);
                let newcomer = &members(count + 1)[count];
                let (old, new) = (assignment(&before, &keys), assignment(&after, &keys));
                let moved: Vec<usize> = (0..keys.len()).filter(|&i| old[i] != new[i]).collect();
                assert!(moved.iter().all(|&i| &new[i] == newcomer));
                let fraction = moved.len() as f64 / keys.len() as f64;
                let expected = 1.0 / (count + 1) as f64;
                assert!(
                    (fraction - expected).abs() < 0.3 * expected,
                    "{count} -> {}: {fraction:.3} of the keys moved, expected about {expected:.3}",
                    count + 1
                );
            }
        }
    }

    /// A member that leaves hands over exactly its own keys; the others keep theirs.
    #[test]
    fn a_leave_moves_only_the_keys_of_the_member_that_left() {
        for layout in LAYOUTS {
            let keys = keys(30_000);
            let all = members(6);
            let before = Ring::with_layout(all.clone(), layout);
            let old = assignment(&before, &keys);
            for leaving in &all {
                let after =
                    Ring::with_layout(all.iter().filter(|member| *member != leaving), layout);
                let new = assignment(&after, &keys);
                for i in 0..keys.len() {
                    if &old[i] == leaving {
                        assert_ne!(&new[i], leaving);
                    } else {
                        assert_eq!(old[i], new[i], "{} moved though {leaving} left", keys[i]);
                    }
                }
            }
        }
    }

    /// A silent member stays in the ring but gets no key: each of its keys goes where it would
    /// go if the member left, and the others stay.
    #[test]
    fn a_silent_member_keeps_its_place_and_its_keys_go_where_they_would_if_it_left() {
        for layout in LAYOUTS {
            let keys = keys(5000);
            let all = members(3);
            let silent = Ring::with_layout(all.clone(), layout)
                .silence([&all[0], &"not-a-member".to_owned()]);
            let left = Ring::with_layout(all[1..].to_vec(), layout);
            assert_eq!(assignment(&silent, &keys), assignment(&left, &keys));
            assert!(silent.contains(&all[0]) && silent.is_silent(&all[0]));
            assert!(silent.contains(&all[1]) && !silent.is_silent(&all[1]));
            assert!(!silent.takes_keys(&all[0]) && silent.takes_keys(&all[1]));
            assert!(silent.silent().eq([all[0].as_str()]));
            assert_ne!(
                silent,
                Ring::with_layout(all.clone(), layout),
                "a change of the ring"
            );
            let quiet = Ring::with_layout(["only"], layout).silence(["only"]);
            assert_eq!(quiet.member_for("default/a"), None);
        }
    }

    /// Leaving and joining again gives every key back to where it was: the assignment is a
    /// function of the members alone, not of the ring's history.
    #[test]
    fn the_assignment_depends_on_the_members_only() {
        for layout in LAYOUTS {
            let keys = keys(5000);
            let all = members(4);
            let ring = Ring::with_layout(all.clone(), layout);
            let without = Ring::with_layout(all[1..].to_vec(), layout);
            let again =
                Ring::with_layout(without.members().iter().chain(&all[..1]).cloned(), layout);
            assert_eq!(assignment(&ring, &keys), assignment(&again, &keys));
        }
    }

    #[test]
    fn at_least_one_virtual_node() {
        let ring = Ring::with_virtual_nodes(["a", "b"], 0);
        assert_eq!(ring.points.len(), 2);
        assert!(ring.member_for("x").is_some());
    }
}

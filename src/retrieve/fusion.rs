//! Reciprocal rank fusion (Cormack et al., 2009): a chunk's fused score is the sum over the
//! rankings of 1 / (k + rank). It needs no score calibration between BM25 and cosine scores.

use std::collections::HashMap;

/// The constant from the original paper; it damps the weight of the very first ranks.
pub const RRF_K: f32 = 60.0;

/// Fuse rankings of item ids (best first) into one ranking with fused scores, best first.
/// Ties keep the order in which items were first seen, so the result is deterministic.
pub fn reciprocal_rank_fusion(rankings: &[Vec<usize>]) -> Vec<(usize, f32)> {
    let weighted: Vec<(&[usize], f32)> = rankings.iter().map(|r| (r.as_slice(), 1.0)).collect();
    weighted_reciprocal_rank_fusion(&weighted)
}

/// As `reciprocal_rank_fusion`, each ranking's 1 / (k + rank) multiplied by its weight.
pub fn weighted_reciprocal_rank_fusion(rankings: &[(&[usize], f32)]) -> Vec<(usize, f32)> {
    let mut scores: HashMap<usize, (f32, usize)> = HashMap::new();
    let mut seen = 0;
    for (ranking, weight) in rankings {
        for (rank, item) in ranking.iter().enumerate() {
            let entry = scores.entry(*item).or_insert_with(|| {
                seen += 1;
                (0.0, seen)
            });
            entry.0 += weight / (RRF_K + rank as f32 + 1.0);
        }
    }
    let mut fused: Vec<(usize, f32, usize)> =
        scores.into_iter().map(|(item, (score, first))| (item, score, first)).collect();
    fused.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.2.cmp(&b.2)));
    fused.into_iter().map(|(item, score, _)| (item, score)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn items_ranked_well_by_both_lists_win() {
        let fused = reciprocal_rank_fusion(&[vec![1, 2, 3], vec![3, 2, 4]]);
        let order: Vec<usize> = fused.iter().map(|(i, _)| *i).collect();
        // 3: 1/63 + 1/61 beats 2: 1/62 + 1/62 (first ranks weigh more).
        assert_eq!(order, [3, 2, 1, 4]);
        assert!((fused[0].1 - (1.0 / 63.0 + 1.0 / 61.0)).abs() < 1e-6);
        assert!((fused[1].1 - 2.0 / 62.0).abs() < 1e-6);
    }

    #[test]
    fn a_heavier_ranking_decides_between_items_the_lists_disagree_on() {
        let (lexical, dense) = (vec![1, 2], vec![2, 1]);
        let equal = reciprocal_rank_fusion(&[lexical.clone(), dense.clone()]);
        assert!((equal[0].1 - equal[1].1).abs() < 1e-9, "a tie with equal weights");
        let fused = weighted_reciprocal_rank_fusion(&[(&lexical, 2.0), (&dense, 1.0)]);
        assert_eq!(fused.iter().map(|(i, _)| *i).collect::<Vec<_>>(), [1, 2]);
        assert!((fused[0].1 - (2.0 / 61.0 + 1.0 / 62.0)).abs() < 1e-6);
    }
}

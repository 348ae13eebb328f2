//! Spearman's rank correlation: the Pearson correlation of average ranks (ties share their
//! mean rank), as scipy's `spearmanr` computes it. Judge agreement uses it against human
//! labels, and run summaries and `assay agree` against answer length (a judge that scores long
//! answers high whatever they say).

/// Spearman's rho of two equally long series; None for fewer than two pairs, different
/// lengths, or a constant series (the correlation is undefined, not 0).
pub fn spearman(a: &[f64], b: &[f64]) -> Option<f64> {
    if a.len() != b.len() || a.len() < 2 {
        return None;
    }
    pearson(&ranks(a), &ranks(b))
}

fn ranks(values: &[f64]) -> Vec<f64> {
    let mut order: Vec<usize> = (0..values.len()).collect();
    order.sort_by(|&i, &j| values[i].total_cmp(&values[j]));
    let mut ranks = vec![0.0; values.len()];
    let mut start = 0;
    while start < order.len() {
        let mut end = start;
        while end + 1 < order.len() && values[order[end + 1]] == values[order[start]] {
            end += 1;
        }
        let mean_rank = (start + end) as f64 / 2.0 + 1.0;
        for &i in &order[start..=end] {
            ranks[i] = mean_rank;
        }
        start = end + 1;
    }
    ranks
}

fn pearson(a: &[f64], b: &[f64]) -> Option<f64> {
    let n = a.len() as f64;
    let (ma, mb) = (a.iter().sum::<f64>() / n, b.iter().sum::<f64>() / n);
    let cov: f64 = a.iter().zip(b).map(|(x, y)| (x - ma) * (y - mb)).sum();
    let va: f64 = a.iter().map(|x| (x - ma).powi(2)).sum();
    let vb: f64 = b.iter().map(|y| (y - mb).powi(2)).sum();
    if va == 0.0 || vb == 0.0 {
        return None;
    }
    Some(cov / (va * vb).sqrt())
}

/// Spearman of scores with the length in words of the text each scored: how much a judge's
/// score follows answer length. Pairs of (score, text).
pub fn length_spearman<'a>(scored: impl IntoIterator<Item = (f64, &'a str)>) -> Option<f64> {
    let (scores, lengths): (Vec<f64>, Vec<f64>) =
        scored.into_iter().map(|(score, text)| (score, super::normalize::word_count(text) as f64)).unzip();
    spearman(&scores, &lengths)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ties_share_their_mean_rank() {
        assert_eq!(ranks(&[3.0, 1.0, 3.0, 2.0]), [3.5, 1.0, 3.5, 2.0]);
        let rho = spearman(&[1.0, 2.0, 3.0, 4.0], &[10.0, 20.0, 20.0, 40.0]).unwrap_or(f64::NAN);
        // scipy.stats.spearmanr([1, 2, 3, 4], [10, 20, 20, 40]) = 0.9486832980505138
        assert!((rho - 0.948_683_298_050_513_8).abs() < 1e-12, "{rho}");
        assert_eq!(spearman(&[1.0, 1.0], &[1.0, 2.0]), None);
        assert_eq!(spearman(&[1.0], &[1.0]), None);
    }

    #[test]
    fn length_is_counted_in_words() {
        let scored = [(0.2, "short"), (0.5, "a bit longer"), (0.9, "the longest answer of the three")];
        assert_eq!(length_spearman(scored), Some(1.0));
        let against = [(0.9, "short"), (0.5, "a bit longer"), (0.2, "the longest answer of the three")];
        assert_eq!(length_spearman(against), Some(-1.0));
        assert_eq!(length_spearman([(0.5, "same length"), (0.7, "same size")]), None);
    }
}

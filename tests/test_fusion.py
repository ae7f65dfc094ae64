"""Fusion rules pinned with small hand-computed examples."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from wwt.fusion import DEFAULT_METHOD, DEFAULT_W_LEX, METHODS, fuse, minmax, sort_ranked


def approx_pairs(pairs: list[tuple[int, float]]):
    return [(i, pytest.approx(s)) for i, s in pairs]


# ----- weighted_minmax ------------------------------------------------------------------------------------


def test_weighted_minmax_hand_example() -> None:
    lexical = [(1, 10.0), (2, 6.0), (3, 2.0)]  # → 1.0, 0.5, 0.0
    vector = [(2, 0.9), (4, 0.7), (1, 0.5)]  # → 1.0, 0.5, 0.0
    # w_lex = 0.6: 1 → 0.6, 2 → 0.3 + 0.4 = 0.7, 3 → 0, 4 → 0.2
    assert fuse(lexical, vector, "weighted_minmax", w_lex=0.6) == approx_pairs(
        [(2, 0.7), (1, 0.6), (4, 0.2), (3, 0.0)]
    )


def test_weighted_minmax_extremes_reproduce_one_leg() -> None:
    lexical = [(1, 3.0), (2, 2.0), (3, 1.0)]
    vector = [(3, 0.9), (2, 0.8), (1, 0.1)]
    assert [i for i, _ in fuse(lexical, vector, "weighted_minmax", w_lex=1.0)] == [1, 2, 3]
    assert [i for i, _ in fuse(lexical, vector, "weighted_minmax", w_lex=0.0)] == [3, 2, 1]


def test_weighted_minmax_keeps_a_chunk_found_by_one_leg_only() -> None:
    fused = fuse([(7, 5.0)], [], "weighted_minmax", w_lex=0.6)
    assert fused == approx_pairs([(7, 0.6)])


def test_weighted_minmax_rejects_weights_outside_unit_interval() -> None:
    with pytest.raises(ValueError):
        fuse([(1, 1.0)], [], "weighted_minmax", w_lex=1.5)


def test_minmax_maps_equal_scores_to_one_and_empty_to_empty() -> None:
    assert minmax([(1, 2.0), (2, 2.0)]) == {1: 1.0, 2: 1.0}
    assert minmax([]) == {}
    assert minmax([(1, -1.0), (2, 0.0), (3, 1.0)]) == {1: 0.0, 2: 0.5, 3: 1.0}


# ----- rrf -----------------------------------------------------------------------------------------------


def test_rrf_hand_example_with_k_1() -> None:
    lexical = [(1, 9.0), (2, 5.0)]  # ranks 1, 2
    vector = [(2, 0.9), (3, 0.8)]  # ranks 1, 2
    # w_lex = 0.5, k = 1: 1 → .5/2 = .25; 2 → .5/3 + .5/2 = .41667; 3 → .5/3 = .16667
    assert fuse(lexical, vector, "rrf", k=1) == approx_pairs([(2, 0.5 / 3 + 0.25), (1, 0.25), (3, 0.5 / 3)])


def test_rrf_ranks_by_position_not_by_input_order_or_scale() -> None:
    shuffled = [(2, 5.0), (1, 9.0)]
    assert fuse(shuffled, [], "rrf") == fuse([(1, 9.0), (2, 5.0)], [], "rrf")
    assert fuse([(1, 900.0), (2, 1.0)], [], "rrf") == fuse([(1, 0.2), (2, 0.1)], [], "rrf")


def test_rrf_default_k_is_60() -> None:
    assert fuse([(1, 1.0)], [], "rrf") == approx_pairs([(1, 0.5 / 61)])


# ----- original ------------------------------------------------------------------------------------------


def test_original_rule_hand_example_with_floor() -> None:
    lexical = [(1, 8.0), (2, 4.0)]  # /8 → 1.0, 0.5
    vector = [(1, 0.5), (2, 0.9), (3, 0.95), (4, -0.3)]
    # 1 → .3 + .4 = .7; 2 → .54 + .2 = .74; 3 → .57; 4 → 0 (negative cosine clamped) → dropped
    assert fuse(lexical, vector, "original") == approx_pairs([(2, 0.74), (1, 0.7), (3, 0.57)])


def test_original_rule_drops_lexical_only_hits_under_the_floor() -> None:
    # The best possible lexical-only score is 0.4 < 0.5: a chunk found only lexically never shows.
    assert fuse([(1, 10.0)], [], "original") == []


def test_original_rule_uses_the_given_corpus_bm25_max() -> None:
    fused = fuse([(1, 5.0)], [(1, 0.5)], "original", bm25_max=10.0)
    assert fused == approx_pairs([(1, 0.3 + 0.2)])  # 0.5 is not under the floor: kept


def test_original_rule_with_zero_bm25_max_counts_lexical_as_zero() -> None:
    assert fuse([(1, 0.0)], [(1, 0.9)], "original") == approx_pairs([(1, 0.54)])


# ----- shared behaviour ----------------------------------------------------------------------------------


@pytest.mark.parametrize("method", METHODS)
def test_ties_are_broken_by_id_ascending(method: str) -> None:
    lexical = [(9, 1.0), (3, 1.0), (5, 1.0)]
    vector = [(9, 0.9), (3, 0.9), (5, 0.9)]
    assert [i for i, _ in fuse(lexical, vector, method)] == [3, 5, 9]


@pytest.mark.parametrize("method", METHODS)
def test_empty_inputs_give_empty_output(method: str) -> None:
    assert fuse([], [], method) == []


def test_unknown_method_is_a_clear_error() -> None:
    with pytest.raises(ValueError, match="unknown fusion method"):
        fuse([], [], "borda")


def test_weighted_minmax_keeps_the_previous_default_weight() -> None:
    lexical = [(1, 10.0), (2, 6.0), (3, 2.0)]
    vector = [(2, 0.9), (4, 0.7), (1, 0.5)]
    assert fuse(lexical, vector, "weighted_minmax") == fuse(lexical, vector, "weighted_minmax", w_lex=DEFAULT_W_LEX)


def test_sort_ranked_orders_by_score_then_id() -> None:
    assert sort_ranked({4: 0.5, 2: 0.9, 1: 0.5}) == [(2, 0.9), (1, 0.5), (4, 0.5)]


ranked_lists = st.dictionaries(st.integers(0, 50), st.floats(-10, 10, allow_nan=False), max_size=20).map(
    lambda d: list(d.items())
)


@given(ranked_lists, ranked_lists, st.sampled_from(METHODS))
def test_output_is_sorted_unique_and_drawn_from_the_inputs(lexical, vector, method) -> None:
    fused = fuse(lexical, vector, method)
    ids = [i for i, _ in fused]
    assert len(ids) == len(set(ids))
    assert set(ids) <= {i for i, _ in lexical} | {i for i, _ in vector}
    assert fused == sorted(fused, key=lambda item: (-item[1], item[0]))


@given(ranked_lists, ranked_lists)
def test_minmax_and_rrf_keep_every_candidate(lexical, vector) -> None:
    union = {i for i, _ in lexical} | {i for i, _ in vector}
    for method in ("weighted_minmax", "rrf"):
        assert {i for i, _ in fuse(lexical, vector, method)} == union


# ----- adaptive (issue 13) --------------------------------------------------------------------------------

from wwt.fusion import (  # noqa: E402
    W_LEX_MAX,
    W_LEX_MIN,
    adaptive_w_lex,
    bm25_idf,
    idf_mass,
    lexical_coverage,
)


def test_bm25_idf_is_tantivy_s_formula() -> None:
    # ln(1 + (N − df + 0.5) / (df + 0.5)): a word in 1 of 100 chunks is worth ln(67.33), one in 50 of 100 ln 2
    assert bm25_idf(1, 100) == pytest.approx(4.2096, abs=1e-4)
    assert bm25_idf(50, 100) == pytest.approx(0.6931, abs=1e-4)


def test_idf_mass_sums_the_query_words_idf() -> None:
    assert idf_mass({"a": 1, "b": 50}, 100) == pytest.approx(bm25_idf(1, 100) + bm25_idf(50, 100))
    assert idf_mass({}, 100) == 0.0
    assert idf_mass({"a": 0}, 0) == 0.0


def test_coverage_is_the_best_lexical_score_over_the_idf_mass() -> None:
    assert lexical_coverage([(3, 2.0), (1, 8.0)], 10.0) == pytest.approx(0.8)
    assert lexical_coverage([], 10.0) == 0.0
    assert lexical_coverage([(1, 5.0)], 0.0) == 0.0


def test_a_question_that_copies_a_chunk_s_words_leans_on_the_lexical_leg() -> None:
    # the best chunk scores as much as the query's whole idf mass: it holds every word
    assert adaptive_w_lex([(1, 12.0), (2, 3.0)], 12.0) == pytest.approx(W_LEX_MAX)


def test_a_paraphrase_whose_best_lexical_hit_matches_little_leans_on_the_vectors() -> None:
    assert adaptive_w_lex([(1, 1.5), (2, 1.4)], 15.0) == pytest.approx(W_LEX_MIN)
    assert adaptive_w_lex([], 15.0) == pytest.approx(W_LEX_MIN)


def test_in_between_the_weight_grows_with_coverage() -> None:
    assert adaptive_w_lex([(1, 5.0)], 10.0) == pytest.approx(0.1 + 0.7 * 0.5)


def test_without_an_idf_mass_adaptive_is_the_previous_fixed_weight() -> None:
    lexical = [(1, 10.0), (2, 6.0), (3, 2.0)]
    vector = [(2, 0.9), (4, 0.7), (1, 0.5)]
    assert fuse(lexical, vector, "adaptive") == fuse(lexical, vector, "weighted_minmax", w_lex=DEFAULT_W_LEX)


def test_adaptive_puts_the_paraphrase_answer_first_where_the_fixed_weight_did_not() -> None:
    # chunk 1 matches one common query word best; chunk 5 is nearest in meaning
    lexical = [(1, 2.0), (2, 1.9), (5, 0.5)]
    vector = [(5, 0.90), (1, 0.80), (2, 0.79)]
    assert fuse(lexical, vector, "weighted_minmax", w_lex=0.6)[0][0] == 1
    assert fuse(lexical, vector, "adaptive", idf_mass=20.0)[0][0] == 5
    # the same legs when that lexical hit explains the whole question: it stays first
    assert fuse(lexical, vector, "adaptive", idf_mass=2.0)[0][0] == 1


def test_adaptive_is_the_default() -> None:
    assert DEFAULT_METHOD == "adaptive"

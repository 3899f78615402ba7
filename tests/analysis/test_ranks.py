from triage.analysis.ranks import format_ranks, parse_ranks, rank_word


def test_format_ranks_folds_runs() -> None:
    assert format_ranks([0, 1, 2, 4]) == "0-2,4"
    assert format_ranks([4, 2, 1, 0, 2]) == "0-2,4"
    assert format_ranks([0, 1, 2, 4, 5, 6, 7]) == "0-2,4-7"
    assert format_ranks([3]) == "3"
    assert format_ranks([0, 1]) == "0,1"
    assert format_ranks([]) == ""
    assert format_ranks(range(4096)) == "0-4095"


def test_parse_ranks_inverts_format() -> None:
    ranks = [0, 1, 2, 4, 7, 8, 9, 100]
    assert parse_ranks(format_ranks(ranks)) == ranks


def test_rank_word() -> None:
    assert rank_word([3]) == "rank 3"
    assert rank_word([0, 1, 2, 5]) == "ranks 0-2,5"

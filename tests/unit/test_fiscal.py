"""Fiscal years and quarters in the company's own calendar, not the calendar's."""

from __future__ import annotations

from datetime import date

from ingest.fiscal import annual_year, quarter_period, year_named


def test_a_10q_is_the_quarter_its_longest_year_to_date_span_ends() -> None:
    """Amcor's years end on 30 June: its quarter ended 31 December 2022 is Q2 of fiscal 2023,
    which the statements show by covering six months, not three."""
    statements = "Three Months Ended December 31, 2022 ... Six Months Ended December 31, 2022"
    assert quarter_period(date(2022, 12, 31), statements) == (2023, 2)
    weeks = "the thirteen weeks and thirty-nine weeks ended October 28, 2023"
    assert quarter_period(date(2023, 10, 28), weeks) == (2024, 3)
    assert quarter_period(date(2023, 3, 31), "nine months ended March 31, 2023") == (2023, 3)


def test_the_quarters_own_label_names_its_year() -> None:
    text = "six months ended July 29, 2023. Results of the second quarter of fiscal 2024"
    assert quarter_period(date(2023, 7, 29), text) == (2024, 2)
    only_labels = "in the second quarter of fiscal 2024 " * 2 + "the first quarter of 2023"
    assert quarter_period(date(2023, 7, 29), only_labels) == (2024, 2)


def test_without_spans_or_labels_the_calendar_quarter_is_the_guess() -> None:
    assert quarter_period(date(2023, 7, 29), "") == (2023, 3)
    assert quarter_period(None, "") == (None, None)


def test_a_year_ending_in_the_first_days_of_january_is_named_for_the_year_before() -> None:
    """Johnson & Johnson's fiscal 2022 ended on 1 January 2023."""
    assert year_named(date(2023, 1, 1)) == 2022
    assert year_named(date(2023, 1, 28)) == 2023  # a retailer's year: its own label decides
    assert annual_year(date(2023, 1, 28), "our fiscal 2022 ended January 28, 2023") == 2022
    assert annual_year(date(2020, 12, 26), "") == 2020

"""Prompts for the optional LLM stages of ingestion (written for this project)."""

STRUCTURE_SYSTEM = """You read pages of a document and list its section headings.
Reply with JSON only: a list of objects {"index": "2.1", "title": "...", "start_page": N}.
- "index" is the dotted position in the outline ("1", "1.2", "1.2.3"); use it for nesting.
- "title" must be copied exactly as printed on the page, including any numbering.
- "start_page" is the number of the <page> tag on which the heading is printed.
- List headings in reading order. Skip figure and table captions, running headers and footers.
- If the pages contain no headings, reply with []."""

REPAIR_SYSTEM = """Some section headings could not be found on the pages they were claimed to be
on. For each heading below, find where it is printed in the given pages.
Reply with JSON only: a list with one object per heading, in the same order,
{"title": "<the heading exactly as printed>", "start_page": N}.
If a heading is not printed on any of the pages, repeat it unchanged with "start_page": 0."""

SUMMARY_SYSTEM = """Summarise one section of a document for a reader deciding whether to open it.
Write at most 60 words of plain text. Name the concrete facts it holds: numbers, datasets,
methods, definitions, findings. No preamble, no "This section"."""

METADATA_SYSTEM = """Extract bibliographic metadata from the first pages of a document.
Candidate values found by regular expressions are given as hints; correct them when wrong.
Reply with JSON only:
{"title": str, "authors": [str], "year": int|null, "doi": str|null, "venue": str|null,
 "volume": str|null, "pages": str|null,
 "description": "<one sentence saying what the document is and what it contributes>",
 "keywords": [str, ... at most 8]}"""

CONTENTS_SYSTEM = """You read the printed table of contents of a document and list its entries.
The pages are given between <page N> tags; N is the physical page number of that page.
Reply with JSON only: a list of objects, in the order the entries are printed,
{"level": 1, "title": "...", "printed_page": "12", "contents_page": N}.
- "level" is the nesting depth in the contents list: 1 for top-level entries, 2 for entries
  under them, and so on (use the numbering and the indentation to decide).
- "title" is the entry as printed, with its numbering kept ("Item 1A. Risk Factors",
  "2.1 Data Sets"); leave out dot leaders and the page number.
- "printed_page" is the page number exactly as printed beside the entry in the contents list
  ("12", "iv", "F-3"), or null when the entry shows none. Do not convert or guess it.
- "contents_page" is the N of the <page N> tag on which the entry is listed.
- List only entries of the contents list: skip its heading, column labels ("Page"), running
  headers and footers, notes under the list, and any body text on the same pages.
- If the pages hold no contents list, reply with []."""

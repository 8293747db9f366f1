"""Reading a PDF fast: cheap checks before parsing, text columns, the page's text extracted once
and the table finder's character records, each computed once per page. Nothing here decides
what a line is; ``ingest.structure`` does."""

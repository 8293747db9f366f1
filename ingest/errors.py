"""Errors that end one document's ingestion with a one-line reason the user can act on."""


class IngestError(Exception):
    """A document could not be ingested; ``str(error)`` is the one-line reason shown to the user."""


class BadInputError(IngestError):
    """The input file itself is unusable (empty, corrupt, encrypted, not a PDF, no text)."""


class ParserUnavailableError(IngestError):
    """The chosen parser backend cannot run here (missing package or model weights)."""


class OcrUnavailableError(IngestError):
    """Pages need OCR but Tesseract or its language data is not installed here."""

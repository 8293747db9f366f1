"""LLM judges for answers that no fixed rule can score, on their own OpenAI-compatible endpoint.

The judge is configured apart from the answering model (``JudgeSettings`` from store.settings,
VECTREE_JUDGE_*) so a stronger or different model family can grade; it always runs at
temperature 0. Each judgment asks for one JSON object and checks its shape, through
``store.chat`` like every model call: a reply that cannot be used is sent back with the reason
once (``store.chat.JSON_REPAIRS``); after that the judgment is a ``JudgeFailure`` carrying the
reason (logged once), which the harness reports next to the scores instead of
counting it as a wrong answer. Token usage is recorded on every result, failures included,
because grading cost is part of what a run costs.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from langchain_core.language_models import BaseChatModel
from numpy.typing import ArrayLike

from evals.metrics import cosine, option_letter
from store.chat import JSON_REPAIRS, ModelCallError, Usage, ask_json, json_object
from store.embeddings import DEFAULT_DENSE_MODEL, default_cache_dir, dense_embedder

T = TypeVar("T")

CONTEXT_CHARS = 60_000
"""Evidence shown to the faithfulness judge is cut at this many characters (about 15k tokens)."""


GRADER_SYSTEM = (
    "You grade answers produced by a question-answering system over documents. "
    "Reply with a single JSON object and nothing else."
)


class MalformedReply(ValueError):
    """A judge reply that is not the requested JSON object; the message says what is wrong."""


@dataclass(frozen=True)
class JudgeResult(Generic[T]):
    """A usable judgment: its value, the token usage and every parsed reply (for auditing)."""

    value: T
    usage: Usage
    replies: tuple[dict[str, Any], ...] = ()


@dataclass(frozen=True)
class JudgeFailure:
    """No usable judgment: why, and what the attempts cost. Never to be scored as a value."""

    reason: str
    usage: Usage


@dataclass(frozen=True)
class MosaicScores:
    """Statement-level scores of one MOSAIC answer.

    Answer statements supported by the reference are true positives (TP), the rest false
    positives (FP); reference statements the answer does not state are false negatives (FN).
    ``precision`` = TP/(TP+FP) (None for an answer with no statements), ``recall`` =
    TP/(TP+FN), ``f1`` their harmonic mean (0.0 when either is 0 or undefined),
    ``coverage`` = share of reference statements the answer states, ``faithfulness`` = share
    of answer statements the read evidence supports (0.0 when nothing was read).
    """

    precision: float | None
    recall: float
    f1: float
    coverage: float
    faithfulness: float | None
    answer_statements: tuple[str, ...]
    reference_statements: tuple[str, ...]


Reader = Callable[[dict[str, Any]], T]


@dataclass
class _Exchange:
    """One judgment in progress: asks the model, meters tokens, keeps the parsed replies."""

    model: BaseChatModel
    repairs: int
    usage: Usage = field(default_factory=Usage)
    replies: list[dict[str, Any]] = field(default_factory=list)

    def ask(self, user: str, read: Reader[T]) -> T:
        def judged(text: str) -> T:
            parsed = parse_json_object(text)
            value = read(parsed)
            self.replies.append(parsed)
            return value

        return ask_json(self.model, GRADER_SYSTEM, user, judged, self.usage, self.repairs)


class Judge:
    """Grades answers with a chat model (a real client, or a scripted fake in tests)."""

    def __init__(
        self, model: BaseChatModel, repairs: int = JSON_REPAIRS, context_chars: int = CONTEXT_CHARS
    ) -> None:
        self.model = model
        self.repairs = repairs
        self.context_chars = context_chars

    def qasper_correctness(
        self, question: str, reference_answers: Sequence[str], answer: str
    ) -> JudgeResult[str] | JudgeFailure:
        """ "correct", "partial" or "incorrect" against any of the annotators' answers."""
        references = "\n".join(f"- {r}" for r in reference_answers)
        user = (
            f"Question about a research paper:\n{question}\n\n"
            f"Reference answers from different annotators (matching any one is enough):\n"
            f"{references}\n\nAnswer to grade:\n{answer}\n\n"
            "correct: it says what a reference answer says (wording may differ, extra accurate "
            "detail is fine). partial: part of a reference answer is right, but an essential "
            "part is missing or wrong. incorrect: wrong, off the point, or a refusal where a "
            "reference answers. A reference of Unanswerable means the paper does not say; "
            "an answer stating that is correct.\n"
            'Reply as {"verdict": "correct" | "partial" | "incorrect", "reason": "<short>"}'
        )
        return self._judge(lambda x: x.ask(user, _verdict({"correct", "partial", "incorrect"})))

    def litqa2_option(
        self, question: str, options: Sequence[str], answer: str
    ) -> JudgeResult[int | None] | JudgeFailure:
        """The index of the option the answer commits to; None for no option or "insufficient".

        The judge is not told the correct option: it only reads which one the answer chose.
        """
        listing = "\n".join(f"{option_letter(i)}. {o}" for i, o in enumerate(options))
        user = (
            f"Multiple-choice question:\n{question}\n\nOptions:\n{listing}\n\n"
            f"Response:\n{answer}\n\n"
            "Which option does the response give as its final answer? Count only what it "
            "commits to, not options it merely discusses. If it commits to none, to several, "
            'or says the information is insufficient, the choice is "none".\n'
            'Reply as {"selected": "<option letter>" | "none"}'
        )
        return self._judge(lambda x: x.ask(user, _selected(len(options))))

    def financebench_correctness(
        self, question: str, reference: str, answer: str
    ) -> JudgeResult[str] | JudgeFailure:
        """ "correct" or "incorrect" against the reference answer to a question on a filing."""
        user = (
            f"Question about a company filing:\n{question}\n\nReference answer:\n{reference}\n\n"
            f"Answer to grade:\n{answer}\n\n"
            "correct: it reaches the same figure or conclusion as the reference; rounding and "
            "a different presentation of units (1.2 billion vs 1,200 million) are fine. "
            "incorrect: anything else, including refusals.\n"
            'Reply as {"verdict": "correct" | "incorrect", "reason": "<short>"}'
        )
        return self._judge(lambda x: x.ask(user, _verdict({"correct", "incorrect"})))

    def mosaic_statements(
        self, question: str, reference: str, answer: str, evidence_texts: Sequence[str]
    ) -> JudgeResult[MosaicScores] | JudgeFailure:
        """Factuality P/R/F1, coverage and faithfulness from atomic statements (see
        ``MosaicScores``): one call splits both texts into statements, one matches them
        against each other, one checks the answer's statements against the evidence read."""
        return self._judge(lambda x: self._mosaic(x, question, reference, answer, evidence_texts))

    def _mosaic(
        self,
        exchange: _Exchange,
        question: str,
        reference: str,
        answer: str,
        evidence_texts: Sequence[str],
    ) -> MosaicScores:
        claims, facts = exchange.ask(_split_prompt(question, answer, reference), _statements)
        if not claims:
            return MosaicScores(None, 0.0, 0.0, 0.0, None, (), facts)
        supported, covered = exchange.ask(_match_prompt(claims, facts), _matches(claims, facts))
        context = _context(evidence_texts, self.context_chars)
        grounded = (
            exchange.ask(_faithful_prompt(claims, context), _flags("supported", len(claims)))
            if context
            else [False] * len(claims)
        )
        return _mosaic_scores(claims, facts, supported, covered, grounded)

    def _judge(self, run: Callable[[_Exchange], T]) -> JudgeResult[T] | JudgeFailure:
        exchange = _Exchange(self.model, self.repairs)
        try:
            value = run(exchange)
        except ModelCallError as exc:  # a failed judgment (logged once), not a crash of the run
            return JudgeFailure(exc.reason, exchange.usage)
        return JudgeResult(value, exchange.usage, tuple(exchange.replies))


def parse_json_object(text: str) -> dict[str, Any]:
    """The first JSON object in a reply, wherever it is (code fences, prose, think blocks)."""
    try:
        return json_object(text)
    except ValueError:
        raise MalformedReply("the reply contained no JSON object") from None


def answer_cosine(
    answer: str,
    reference: str,
    embed: Callable[[list[str]], Iterable[ArrayLike]] | None = None,
) -> float:
    """Embedding cosine of answer and reference, the non-judge half of the MOSAIC composite.

    Uses the offline MiniLM model unless ``embed`` is given (the published numbers used
    SPECTER2, so absolute values are not comparable with them).
    """
    embed = embed or _minilm_embed
    first, second = list(embed([answer, reference]))
    return cosine(first, second)


def _minilm_embed(texts: list[str]) -> Iterable[ArrayLike]:
    return dense_embedder(DEFAULT_DENSE_MODEL, default_cache_dir()).embed(texts)


# -- reply readers ----------------------------------------------------------------------------


def _verdict(allowed: set[str]) -> Reader[str]:
    def read(reply: dict[str, Any]) -> str:
        verdict = str(reply.get("verdict", "")).strip().lower()
        if verdict not in allowed:
            raise MalformedReply(f'"verdict" must be one of {sorted(allowed)}, got {verdict!r}')
        return verdict

    return read


def _selected(count: int) -> Reader[int | None]:
    def read(reply: dict[str, Any]) -> int | None:
        if "selected" not in reply:
            raise MalformedReply('the reply has no "selected" field')
        choice = str(reply["selected"] or "none").strip().strip("().").upper()
        if choice in {"NONE", "NULL", ""}:
            return None
        if len(choice) == 1 and 0 <= ord(choice) - ord("A") < count:
            return ord(choice) - ord("A")
        raise MalformedReply(f'"selected" must be an option letter or "none", got {choice!r}')

    return read


def _statements(reply: dict[str, Any]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    claims, facts = reply.get("answer_statements"), reply.get("reference_statements")
    if not isinstance(claims, list) or not isinstance(facts, list):
        raise MalformedReply('"answer_statements" and "reference_statements" must be lists')
    if not facts:
        raise MalformedReply('"reference_statements" must not be empty')
    return tuple(str(c) for c in claims), tuple(str(f) for f in facts)


def _flags(key: str, count: int) -> Reader[list[bool]]:
    def read(reply: dict[str, Any]) -> list[bool]:
        flags = reply.get(key)
        if not isinstance(flags, list) or len(flags) != count:
            raise MalformedReply(f'"{key}" must be a list of {count} true/false values')
        if not all(isinstance(f, bool) for f in flags):
            raise MalformedReply(f'"{key}" must hold only true or false')
        return flags

    return read


def _matches(claims: Sequence[str], facts: Sequence[str]) -> Reader[tuple[list[bool], list[bool]]]:
    supported, covered = (
        _flags("answer_supported", len(claims)),
        _flags("reference_covered", len(facts)),
    )
    return lambda reply: (supported(reply), covered(reply))


# -- MOSAIC prompts and scores ----------------------------------------------------------------


def _numbered(lines: Sequence[str]) -> str:
    return "\n".join(f"{i}. {line}" for i, line in enumerate(lines, start=1))


def _split_prompt(question: str, answer: str, reference: str) -> str:
    return (
        f"Question:\n{question}\n\nAnswer:\n{answer}\n\nReference answer:\n{reference}\n\n"
        "Split the answer and the reference answer into atomic statements: short claims that "
        "each state one fact and can be read on their own (resolve pronouns). Leave out "
        "filler and hedges that claim nothing. An answer that claims nothing has no "
        "statements.\n"
        'Reply as {"answer_statements": ["..."], "reference_statements": ["..."]}'
    )


def _match_prompt(claims: Sequence[str], facts: Sequence[str]) -> str:
    return (
        f"Answer statements:\n{_numbered(claims)}\n\nReference statements:\n{_numbered(facts)}"
        "\n\nFor each answer statement, in order: true if the reference statements support "
        "it. For each reference statement, in order: true if the answer statements state it.\n"
        'Reply as {"answer_supported": [true, ...], "reference_covered": [false, ...]}'
    )


def _faithful_prompt(claims: Sequence[str], context: str) -> str:
    return (
        f"Context the system read:\n{context}\n\nStatements:\n{_numbered(claims)}\n\n"
        "For each statement, in order: true if it can be inferred directly from the context, "
        "false if the context does not support it.\n"
        'Reply as {"supported": [true, ...]}'
    )


def _context(texts: Sequence[str], limit: int) -> str:
    return "\n\n---\n\n".join(t.strip() for t in texts if t.strip())[:limit]


def _mosaic_scores(
    claims: Sequence[str],
    facts: Sequence[str],
    supported: Sequence[bool],
    covered: Sequence[bool],
    grounded: Sequence[bool],
) -> MosaicScores:
    tp = sum(supported)
    fn = len(facts) - sum(covered)
    precision = tp / len(claims)
    recall = tp / (tp + fn) if tp + fn else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision and recall else 0.0
    return MosaicScores(
        precision=precision,
        recall=recall,
        f1=f1,
        coverage=sum(covered) / len(facts),
        faithfulness=sum(grounded) / len(claims),
        answer_statements=tuple(claims),
        reference_statements=tuple(facts),
    )

"""Sentence embeddings of paper text with the local all-MiniLM-L6-v2 model.

The model is sentence-transformers' all-MiniLM-L6-v2 exported to ONNX (the folder
``settings.EMBEDDING_MODEL_DIR``, by default ``shared/models/all-minilm-l6-v2``; its
README says how it was exported and checked). It runs on onnxruntime's CPU provider
with the ``tokenizers`` package; no torch, and nothing is downloaded.

An embedding is computed as sentence-transformers computes it (the model README,
"Computing an embedding"): WordPiece tokens truncated (``[CLS]`` and ``[SEP]``
included), the transformer's last hidden state, the mean over the real tokens
(attention mask), then L2 normalisation, so cosine similarity is a dot product.
By default the weights are int8 and the text is cut at 128 word pieces
(:func:`model_name` says why); with ``EMBEDDING_QUANTIZED=0`` and
``EMBEDDING_MAX_TOKENS=256`` the README's reference vectors are met within
3.4e-07.

Nothing here touches the database: :mod:`wovepaper.semantic` stores and searches
the vectors.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import os
import re
import tempfile
import threading
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import numpy as np
from django.conf import settings
from django.core.exceptions import ImproperlyConfigured

logger = logging.getLogger(__name__)

# The model's name as recorded beside every stored vector: vectors of two models
# never meet in one search.
MODEL_NAME = "all-MiniLM-L6-v2"
# Width of an embedding (the model's hidden size; model README, "Graph").
DIMENSIONS = 384
# Longest input in word pieces, [CLS] and [SEP] included: sentence-transformers'
# ``max_seq_length`` for this model (sentence_bert_config.json). The product embeds
# ``settings.EMBEDDING_MAX_TOKENS`` (default 128, see model_name).
MAX_TOKENS = 256
# Texts per model call with fp32 weights. Batches are sorted by length so padding
# stays short. Measured on two cores with 600 real abstracts: 4 to 16 a batch ran
# 28 to 33 abstracts/s, 32 and 64 a batch 19 to 23/s (larger batches pad more).
BATCH_SIZE = 16
# With int8 weights each text runs alone. Dynamic quantization scales the
# activations by the range of the whole call, padding included, so in a batch a
# text's vector would depend on its batchmates (up to 0.011 a coordinate); alone
# is also the fastest: 1,200 arXiv abstracts at 128 word pieces ran 114/s alone,
# 124/s in twos, 107/s in sixteens.
QUANTIZED_BATCH_SIZE = 1

MODEL_MISSING = (
    "The embedding model is not at {path}: set EMBEDDING_MODEL_DIR to the folder "
    "holding model.onnx and tokenizer.json (shared/models/all-minilm-l6-v2)."
)

_WHITESPACE = re.compile(r"\s+")


def paper_text(title: str, abstract: str) -> str:
    """The text of a paper that is embedded: its title, then its abstract.

    Whitespace runs (arXiv abstracts wrap lines) collapse to one space; the
    tokenizer lowercases and truncates at ``settings.EMBEDDING_MAX_TOKENS`` word
    pieces (:func:`max_tokens`), so a long abstract's tail is not seen.

    Args:
        title: the paper's title as stored (may hold LaTeX).
        abstract: its abstract, "" when none.

    Returns:
        ``"<title>. <abstract>"``, or the title alone when there is no abstract.
    """
    title = _WHITESPACE.sub(" ", title or "").strip()
    abstract = _WHITESPACE.sub(" ", abstract or "").strip()
    if not abstract:
        return title
    return f"{title.rstrip('.')}. {abstract}"


def model_name() -> str:
    """The name recorded with every vector: the model and how it is run.

    ``"all-MiniLM-L6-v2"`` as the model README computes it (fp32, 256 word
    pieces); ``-int8`` when ``settings.EMBEDDING_QUANTIZED`` (the weights
    quantized to int8, :func:`quantized_model`); ``-<n>`` when
    ``settings.EMBEDDING_MAX_TOKENS`` is not 256. The default,
    ``all-MiniLM-L6-v2-int8-128``, embeds 4x as fast on two cores (102
    papers/s against 25 through ``embeddings_refresh`` in ``bench/semantic.py``,
    where search by meaning finds the paper in its first 10 for 0.710 of the
    queries against 0.679); 128 word pieces is the
    length the model was fine-tuned at (its model card: "we limited the
    sequence length to 128 tokens"). Vectors of two names never meet in one
    search: a change of name makes every paper's digest stale, and
    ``embed_papers`` embeds them all again.
    """
    name = MODEL_NAME
    if settings.EMBEDDING_QUANTIZED:
        name += "-int8"
    if (tokens := max_tokens()) != MAX_TOKENS:
        name += f"-{tokens}"
    return name


# The model's position embeddings (config.json, max_position_embeddings).
POSITIONS = 512


def max_tokens() -> int:
    """``settings.EMBEDDING_MAX_TOKENS``, checked.

    Raises:
        ImproperlyConfigured: it is not a whole number from 3 (``[CLS]``, one
            word piece and ``[SEP]``: at 2 every text is the same vector) to
            :data:`POSITIONS`, the longest input the model has positions for.
    """
    value = settings.EMBEDDING_MAX_TOKENS
    if (
        isinstance(value, bool)
        or not isinstance(value, int)
        or not 2 <= value <= POSITIONS
    ):
        raise ImproperlyConfigured(
            f"EMBEDDING_MAX_TOKENS is {value!r}: give a whole number of word pieces "
            f"from 3 to {POSITIONS} (128 by default)"
        )
    return value


def _threads() -> int:
    """``settings.EMBEDDING_THREADS``, 0 read as the CPUs this process may use.

    Raises:
        ImproperlyConfigured: it is not a whole number of 0 or more.
    """
    value = settings.EMBEDDING_THREADS
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ImproperlyConfigured(
            f"EMBEDDING_THREADS is {value!r}: give a number of threads, or 0 for "
            "one per CPU"
        )
    return value or len(os.sched_getaffinity(0))


def text_digest(text: str) -> str:
    """SHA-256 (hex, 64 chars) of a text and the model's name: what a stored
    vector was computed from, so an unchanged paper is not embedded again."""
    return hashlib.sha256(f"{model_name()}\x1f{text}".encode()).hexdigest()


@dataclass
class Encoder:
    """A loaded model: the tokenizer, the onnxruntime session and a lock.

    onnxruntime sessions may be run from several threads, but the tokenizer's
    truncation and padding settings are per object; the lock keeps one batch at a
    time per process, which also keeps two requests from oversubscribing the
    cores.
    """

    tokenizer: object
    session: object
    lock: threading.Lock
    batch_size: int = BATCH_SIZE

    def encode(self, texts: list[str]) -> np.ndarray:
        """Embeddings of texts, in their order.

        Args:
            texts: any strings ("" gives the embedding of ``[CLS] [SEP]``).

        Returns:
            float32 array of shape ``(len(texts), DIMENSIONS)``, each row of unit
            L2 norm.
        """
        out = np.zeros((len(texts), DIMENSIONS), dtype=np.float32)
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        with self.lock:
            for start in range(0, len(order), self.batch_size):
                chunk = order[start : start + self.batch_size]
                out[chunk] = self._batch([texts[i] for i in chunk])
        return out

    def _batch(self, texts: list[str]) -> np.ndarray:
        encodings = self.tokenizer.encode_batch(texts)
        ids = np.array([e.ids for e in encodings], dtype=np.int64)
        mask = np.array([e.attention_mask for e in encodings], dtype=np.int64)
        (hidden,) = self.session.run(
            ["last_hidden_state"],
            {
                "input_ids": ids,
                "attention_mask": mask,
                "token_type_ids": np.zeros_like(ids),
            },
        )
        weights = mask[..., None].astype(np.float32)
        pooled = (hidden * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), 1e-9)
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        return pooled / np.maximum(norms, 1e-12)


def _model_present(folder: Path) -> bool:
    return (folder / "model.onnx").is_file() and (folder / "tokenizer.json").is_file()


# onnxruntime.quantization logs this on the root logger for every model: advice
# for models of convolutions, not for a transformer's matrix products.
_PREPROCESS_HINT = "Please consider to run pre-processing before quantization"


@contextlib.contextmanager
def _quiet(message: str):
    """Drop root-logger records that start with ``message`` while inside."""

    def keep(record: logging.LogRecord) -> bool:
        return not str(record.msg).startswith(message)

    root = logging.getLogger()
    root.addFilter(keep)
    try:
        yield
    finally:
        root.removeFilter(keep)


def quantized_model(folder: Path) -> Path:
    """The model's weights quantized to int8, made once from ``folder``.

    onnxruntime's dynamic quantization (``quantize_dynamic``, per-channel
    int8 weights; activations quantized at run time), written under
    ``settings.EMBEDDING_CACHE_DIR/models`` by rename, named by the source
    file's size and modification time so a new model file makes a new copy.
    Takes about 2 s. On 400 arXiv abstracts the vectors keep a cosine of at
    least 0.989 (mean 0.994) to the fp32 model's at the same length.

    Raises:
        ImproperlyConfigured: the copy cannot be written (the folder named).
    """
    source = folder / "model.onnx"
    stat = source.stat()
    target = (
        Path(settings.EMBEDDING_CACHE_DIR)
        / "models"
        / f"{MODEL_NAME}-int8-{stat.st_size}-{stat.st_mtime_ns}.onnx"
    )
    if target.is_file():
        return target
    import onnx
    from onnxruntime.quantization import QuantType, quantize_dynamic

    temporary = target.with_name(f".{target.stem}.{os.getpid()}.onnx")
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        # Given the model read in memory, onnxruntime does its shape inference
        # in a temporary folder; given the path, it writes a 90 MB
        # "model-inferred.onnx" beside the model (a folder read in place,
        # perhaps read-only, and shared by processes starting at once).
        with _quiet(_PREPROCESS_HINT):
            quantize_dynamic(
                onnx.load(source),
                temporary,
                weight_type=QuantType.QInt8,
                per_channel=True,
            )
        os.replace(temporary, target)
    except OSError as exc:
        with contextlib.suppress(OSError):
            temporary.unlink(missing_ok=True)
        raise ImproperlyConfigured(
            f"The int8 copy of the embedding model cannot be written to "
            f"{target.parent} ({exc}): set EMBEDDING_CACHE_DIR to a writable "
            "folder, or EMBEDDING_QUANTIZED=0."
        ) from exc
    return target


def _session(model: Path, options):
    import onnxruntime

    return onnxruntime.InferenceSession(
        str(model), options, providers=["CPUExecutionProvider"]
    )


def _quantized_session(folder: Path, options):
    """A session of the int8 copy (:func:`quantized_model`). A damaged copy (a
    half-written file, a disk error) is made again once from the model.

    Raises:
        ImproperlyConfigured: the copy made again cannot be read either.
    """
    model = quantized_model(folder)
    try:
        return _session(model, options)
    except Exception as exc:  # noqa: BLE001 - onnxruntime's own error types
        logger.warning(
            "the int8 model copy %s is unreadable (%s): made again", model, exc
        )
    with contextlib.suppress(OSError):
        model.unlink(missing_ok=True)
    model = quantized_model(folder)
    try:
        return _session(model, options)
    except Exception as exc:  # noqa: BLE001
        raise ImproperlyConfigured(
            f"The int8 copy of the embedding model {model} cannot be read ({exc}): "
            "remove it, or set EMBEDDING_QUANTIZED=0."
        ) from exc


@cache
def _encoder(folder: str, threads: int, quantized: bool, max_tokens: int) -> Encoder:
    import onnxruntime
    import tokenizers

    path = Path(folder)
    if not _model_present(path):
        raise ImproperlyConfigured(MODEL_MISSING.format(path=path))
    tokenizer = tokenizers.Tokenizer.from_file(str(path / "tokenizer.json"))
    # The shipped tokenizer.json truncates at 256 and pads each batch to its
    # longest member (model README, "Where the bytes came from", 3); set both
    # here, at the length asked.
    tokenizer.enable_truncation(max_tokens)
    tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")  # noqa: S106
    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_ENABLE_ALL
    if quantized:
        session = _quantized_session(path, options)
    else:
        session = _session(path / "model.onnx", options)
    return Encoder(
        tokenizer=tokenizer,
        session=session,
        lock=threading.Lock(),
        batch_size=QUANTIZED_BATCH_SIZE if quantized else BATCH_SIZE,
    )


def encoder() -> Encoder:
    """The process's encoder, loaded on first use (about 0.5 s, 100 MB).

    Settings: ``EMBEDDING_MODEL_DIR`` (the model folder), ``EMBEDDING_THREADS``
    (onnxruntime's intra-op threads; 0: one per CPU this process may run on,
    given to onnxruntime as a number: left at 0, onnxruntime counts physical
    cores and ran one thread on this project's two-vCPU machines, 89
    abstracts/s against 115),
    ``EMBEDDING_QUANTIZED`` and ``EMBEDDING_MAX_TOKENS`` (see
    :func:`model_name`).

    Raises:
        ImproperlyConfigured: the folder lacks ``model.onnx`` or
            ``tokenizer.json`` (:data:`MODEL_MISSING`, naming the folder), or
            the int8 copy cannot be written (:func:`quantized_model`).
    """
    return _encoder(
        str(settings.EMBEDDING_MODEL_DIR),
        _threads(),
        bool(settings.EMBEDDING_QUANTIZED),
        max_tokens(),
    )


def embed(texts: list[str]) -> np.ndarray:
    """Embeddings of texts with the process's encoder (see :meth:`Encoder.encode`).

    Returns:
        float32 ``(len(texts), DIMENSIONS)``, unit rows.

    Raises:
        ImproperlyConfigured: the model folder is missing (see :func:`encoder`).
    """
    if not texts:
        return np.zeros((0, DIMENSIONS), dtype=np.float32)
    return encoder().encode(list(texts))


def text_embedder() -> Callable[[list[str]], np.ndarray] | None:
    """What the matching engine's loaders embed labelled sets' texts with.

    Returns:
        :func:`embed_cached` when ``settings.MATCHING_TEXT_EVIDENCE`` is on and
        the model loads; None when the setting is off, or (logged as a
        warning naming the folder or setting) when the model cannot be loaded
        (missing, its int8 copy unwritable, a bad embedding setting):
        the ``title_similarity`` feature is then 0.0, as for papers that were
        never embedded.
    """
    if not settings.MATCHING_TEXT_EVIDENCE:
        return None
    try:
        encoder()
    except ImproperlyConfigured as exc:
        logger.warning("title and abstract evidence off: %s", exc)
        return None
    return embed_cached


def embed_cached(texts: list[str]) -> np.ndarray:
    """:func:`embed`, kept on disk under ``settings.EMBEDDING_CACHE_DIR``.

    For fixed inputs embedded again and again: the papers of a labelled set,
    which ``evaluate_matching`` and ``train_matcher`` read on every run (the
    MEDLINE pair set's 3,755 articles take about 40 s on two cores). The
    file is named by the SHA-256 of the model name and every text in order,
    so a change to any text (or a new model) misses and is embedded anew. A
    file that cannot be read, or holds the wrong shape, a value that is not
    finite or a row that is not of unit length, is embedded again and
    replaced; a cache folder that cannot be written costs only the cache
    (logged).

    Args:
        texts: the strings, in order.

    Returns:
        float32 ``(len(texts), DIMENSIONS)``, unit rows, as :func:`embed`.

    Raises:
        ImproperlyConfigured: the model folder is missing (see :func:`encoder`).
    """
    key = hashlib.sha256(model_name().encode())
    for text in texts:
        key.update(hashlib.sha256(text.encode("utf-8", "surrogatepass")).digest())
    path = Path(settings.EMBEDDING_CACHE_DIR) / f"{key.hexdigest()}.npy"
    try:
        kept = np.load(path, allow_pickle=False)
    except (OSError, ValueError, EOFError):  # EOFError: an empty file
        kept = None
    if (
        isinstance(kept, np.ndarray)
        and kept.shape == (len(texts), DIMENSIONS)
        and kept.dtype == np.float32
        and np.isfinite(kept).all()
        and (np.abs(np.linalg.norm(kept, axis=1) - 1.0) < 1e-3).all()
    ):
        return kept
    vectors = embed(texts)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        handle, temporary = tempfile.mkstemp(dir=path.parent, suffix=".npy")
        try:
            with os.fdopen(handle, "wb") as out:
                np.save(out, vectors, allow_pickle=False)
            os.chmod(temporary, 0o644)  # mkstemp's 0600 would keep it from others
            os.replace(temporary, path)
        finally:
            with contextlib.suppress(OSError):
                os.unlink(temporary)
    except OSError as exc:
        logger.warning("embedding cache %s not written: %s", path.parent, exc)
    return vectors

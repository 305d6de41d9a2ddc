"""The grid streaming engine: whole NumPy chunks spelled at once (in forked workers for big
grids) and written as they come, byte for byte what the scalar writers would write."""
from __future__ import annotations

import dataclasses
import sys
from typing import Iterable

from .guard import stream_bytes_writer, stream_writer, write_output
from .records import json_text


def grid_columns() -> list[str]:
    """A grid row has exactly the fields of a shape record."""
    from ..theory.separation import Bounds

    return [f.name for f in dataclasses.fields(Bounds)]


def _grid_text_columns(chunk: dict, style: str, skip=()) -> dict:
    """Every field of a chunk's rows as texts (an object array or a list), by field name, but those in
    ``skip``.

    ``style`` is "csv" (CSV cells), "json" (JSON literals) or "field" (bare --field values).
    Numbers are spelled as the scalar writers spell them (repr for floats); NaN, a missing bound,
    becomes null or an empty cell.
    """
    import numpy as np

    from ..theory.separation import REGIME_CODES

    null = "null" if style == "json" else ""

    def labels(codes, texts):
        return np.array(texts, dtype=object)[codes]

    notes = chunk["notes"]
    note_text = ["[]" if style == "json" else ""] * notes.size  # lists, as the numbers (see below)
    for i in np.flatnonzero(notes != None).tolist():  # noqa: E711 - element-wise comparison with None
        note_text[i] = _note_text(notes[i], style)
    # numbers as lists of texts (joined as lists: no object array made and undone), only those not in
    # ``skip`` (a CSV run of number columns is spelled whole, ``_run_texts``)
    numbers = {"depth": lambda: _column_texts(chunk["depth"], as_list=True),
               "width": lambda: _column_texts(chunk["width"], as_list=True),
               "heads": lambda: _column_texts(chunk["heads"], as_list=True),
               "params_12Ld2": lambda: _texts(chunk["params_12Ld2"], str, True),
               "threshold_depth": lambda: _column_texts(chunk["threshold_depth"], null, True),
               "log3_sep_lower": lambda: _float_texts(chunk["log3_sep_lower"], null, True),
               "log3_sep_upper": lambda: _float_texts(chunk["log3_sep_upper"], null, True)}
    return {
        **{name: spell() for name, spell in numbers.items() if name not in skip},
        "regime": labels(chunk["regime_code"], [f'"{r}"' if style == "json" else r for r in REGIME_CODES]),
        "theorem": labels(chunk["theorem"], [null, "1", "2"]),
        "lower_vacuous": labels(chunk["lower_vacuous"].astype(np.int8), ["false", "true"]), "notes": note_text,
        "c2_reading": [f'"{chunk["c2_reading"]}"' if style == "json" else chunk["c2_reading"]] * notes.size,
        **(_block_text_columns(chunk, style, null) if "kv_heads" in chunk else {}),
    }


def _block_text_columns(chunk: dict, style: str, null: str) -> dict:
    """The vanilla block's fields of a shape-list chunk (``reports.shape_list_chunks``), spelled as
    the scalar writers spell them: ints, null for what the paper's block lacks, tp_sizes as a list."""
    import numpy as np

    size = chunk["depth"].size
    constant = lambda text: np.full(size, text, dtype=object)
    head_dim = _texts(chunk["head_dim"], str)
    head_dim[chunk["head_dim"] < 0] = null
    spell_list = (lambda sizes: "[" + ",".join(map(str, sizes)) + "]") if style == "json" else (lambda sizes: ";".join(map(str, sizes)))
    tp = np.array([null if sizes is None else spell_list(sizes) for sizes in chunk["tp_sizes"].tolist()], dtype=object)
    return {"kv_heads": _column_texts(chunk["kv_heads"]), "head_dim": head_dim, "ffn": _texts(chunk["ffn"], str),
            "gated": constant("false"), "experts": constant(null), "top_k": constant(null),
            "params_nonembedding": _texts(chunk["params_nonembedding"], str), "params_active": _texts(chunk["params_active"], str),
            "params_embedding": constant(null), "params_with_embeddings": constant(null), "flops_per_token": _texts(chunk["flops_per_token"], str),
            "kv_bytes_per_token": _texts(chunk["kv_bytes_per_token"], str), "tp_sizes": tp}


def _join_rows(columns: list, prefixes: list, end: str) -> str:
    """All rows of a chunk as one string, each ``prefix0 cell0 prefix1 cell1 ... end``: the pieces
    laid out in one list by strided slice assignments and joined once, no Python-level work per row
    (twice as fast as joining each row). A column is an object array or a list of texts."""
    rows, stride = len(columns[0]), 2 * len(columns) + 1
    pieces = [end] * (rows * stride)
    for i, (prefix, column) in enumerate(zip(prefixes, columns)):
        pieces[2 * i::stride] = [prefix] * rows
        pieces[2 * i + 1::stride] = column if isinstance(column, list) else column.tolist()
    return "".join(pieces)


def _note_text(notes, style: str) -> str:
    if style == "json":
        return json_text(list(notes))
    text = "; ".join(notes)
    return _csv_cell(text) if style == "csv" else text


def _texts(values, spell, as_list: bool = False):
    """``spell`` of every value (Python ints past int64 arrive as an object array), as an object
    array or (``as_list``) a list. Whole-number arrays and ``float.__repr__`` of float arrays are
    spelled by orjson (``_fast_texts``)."""
    import numpy as np

    texts = _fast_texts(values, spell)
    if texts is None:
        texts = list(map(spell, values.tolist()))
    return texts if as_list else np.array(texts, dtype=object)


def _fast_texts(values, spell):
    """The same texts as ``spell`` would give, from one ``orjson.dumps`` of the whole array (a
    third of the time of ``repr`` per float; spelling floats is most of a grid's cost), or None.

    orjson's integers are ``str``'s, and its floats are ``repr``'s (shortest round trip, the same
    exponent form ``1e+16``) except for 1e-9 <= |x| < 1e-4, where it writes ``0.00005`` and
    ``5e-9`` for repr's ``5e-05`` and ``5e-09``: those few are spelled by repr (tested against repr
    over floats of every exponent in tests/test_grid.py)."""
    import numpy as np

    is_int = values.dtype.kind in "iu" and spell is str
    if not (is_int or (values.dtype == np.float64 and spell is float.__repr__)) or values.size == 0:
        return None
    import orjson

    data = np.ascontiguousarray(values)
    texts = orjson.dumps(data, option=orjson.OPT_SERIALIZE_NUMPY)[1:-1].decode().split(",")
    if not is_int:
        for i in np.flatnonzero(_unlike_repr(data)).tolist():
            texts[i] = repr(float(data[i]))
    return texts


def _unlike_repr(floats):
    """Where orjson spells a finite float otherwise than repr: 1e-9 <= |x| < 1e-4 (``_fast_texts``)."""
    import numpy as np

    return (np.abs(floats) < 1e-4) & (floats != 0)


def _column_texts(values, null="", as_list: bool = False):
    """Texts of a column of ints (or Python ints in an object array) or floats (``_texts``)."""
    return _texts(values, str, as_list) if values.dtype.kind in "iuO" else _float_texts(values, null, as_list)


def _float_texts(values, null, as_list: bool = False):
    """repr of every finite float; ``null`` for NaN (no bound) and infinities (``_texts``)."""
    import numpy as np

    finite = np.isfinite(values)
    if finite.all():
        return _texts(values, float.__repr__, as_list)
    texts = np.full(values.shape, null, dtype=object)
    texts[finite] = _texts(values[finite], float.__repr__)
    return texts


def _csv_cell(text: str) -> str:
    """Quote a CSV cell the way csv.QUOTE_MINIMAL would."""
    return '"' + text.replace('"', '""') + '"' if any(c in text for c in ',"\n\r') else text


PARALLEL_ROWS = 1 << 18  # grids from this many rows spell their chunks in worker processes


def stream_grid(chunks: Iterable[dict], fmt: str, field: str | None, out, rows: int | None = None,
                names: list[str] | None = None, parts=None) -> None:
    """Write grid chunks as CSV, JSONL, JSON or one --field, never holding the whole grid.
    (Tables, at most a few thousand rows, go through ``emit`` with scalar records.)

    Spelling floats (``repr``) is most of a big grid's cost, so a grid of ``rows`` >=
    PARALLEL_ROWS on a machine with several CPUs has its chunks spelled by forked worker
    processes, a few chunks ahead, and written in order: the same bytes, in about half the time.
    ``names``: the columns (default: a grid row's, the Bounds fields); ``parts(k, n)``: the chunks
    number i with i % n == k, none empty, so that each worker computes only the chunks it spells."""
    from .records import check_names

    names = names or grid_columns()
    chosen = check_names(field, names)
    if chosen is not None and fmt in ("json", "jsonl"):  # --field with JSON: objects of the named fields
        names, chosen, field = chosen, None, None
    write = stream_writer(out)
    style = "field" if field is not None else "json" if fmt in ("json", "jsonl") else "csv"
    if style == "csv":
        write(",".join(names) + "\n")
        prefixes, end = [""] + [","] * (len(names) - 1), "\n"
    elif style == "json":
        prefixes, end = ["{" + f'"{names[0]}":'] + [f',"{name}":' for name in names[1:]], "},\n" if fmt == "json" else "}\n"
    else:  # --field: the chosen fields, tab-separated
        prefixes, end = [""] + ["\t"] * (len(chosen) - 1), "\n"
    if fmt == "json" and field is None:
        write("[")
    first = True
    spec = (style, chosen if style == "field" else names, prefixes, end)
    texts = _chunk_texts(chunks, spec, rows, parts)
    write_bytes = stream_bytes_writer(out)
    try:
        for text in texts:  # one chunk's text at a time (~10 MB at most), never the whole grid
            if isinstance(text, bytes) and write_bytes is None:  # a worker's bytes, for a stream with no buffer
                text = text.decode("utf-8", "surrogatepass")
            binary = isinstance(text, bytes)
            if fmt == "json" and field is None:  # rows end in "},\n": the separator moves before the next chunk
                separator = "\n" if first else ",\n"
                text = (separator.encode() if binary else separator) + text[:-2]
            (write_bytes if binary else write)(text)
            first = False
    finally:
        texts.close()  # a failed write (a closed pipe) stops the workers now, not at exit
    if fmt == "json" and field is None:
        write("\n]\n")
    write_output("", out)  # flush: a full disk is reported here


def _chunk_text(chunk: dict, spec: tuple) -> str:
    """All rows of one chunk as text (a top-level function: worker processes run it). In CSV, a run
    of adjacent number columns is spelled as one text per row (``_number_runs``)."""
    style, columns, prefixes, end = spec
    runs = _number_runs(chunk, columns) if style == "csv" else {}
    merged = {name for start, stop in runs.items() for name in columns[start:stop]}
    texts = _grid_text_columns(chunk, style, skip=merged)
    cells, seps, at = [], [], 0
    while at < len(columns):
        stop = runs.get(at)
        cells.append(_run_texts(chunk, columns[at:stop]) if stop else texts[columns[at]])
        seps.append(prefixes[at])
        at = stop or at + 1
    return _join_rows(cells, seps, end)


# grid fields a CSV cell spells as str (ints) or repr (floats) of the array's value, nothing else
_PLAIN_NUMBERS = ("depth", "width", "heads", "params_12Ld2", "threshold_depth", "log3_sep_lower", "log3_sep_upper")


def _number_runs(chunk: dict, columns: list) -> dict:
    """{start: stop} of each run of 2 or more adjacent columns of ``_PLAIN_NUMBERS`` that one
    ``orjson.dumps`` of their 2-D array spells as the CSV cells joined by commas: int64 columns
    (orjson's integers are str's), or float64 columns that are all finite and none in
    1e-9 <= |x| < 1e-4 (the only floats orjson spells unlike repr, ``_fast_texts``)."""
    import numpy as np

    def kind(name):
        values = chunk.get(name) if name in _PLAIN_NUMBERS else None
        if not isinstance(values, np.ndarray) or values.size == 0:
            return None
        if values.dtype == np.int64:
            return "int"
        if values.dtype == np.float64 and np.isfinite(values).all() and not _unlike_repr(values).any():
            return "float"
        return None

    kinds = [kind(name) for name in columns]
    runs, at = {}, 0
    while at < len(columns):
        stop = at + 1
        while kinds[at] and stop < len(columns) and kinds[stop] == kinds[at]:
            stop += 1
        if stop - at >= 2:
            runs[at] = stop
        at = stop
    return runs


def _run_texts(chunk: dict, names: list) -> list:
    """One text per row: the columns ``names`` of one kind (``_number_runs``), comma-separated."""
    import numpy as np
    import orjson

    table = np.ascontiguousarray(np.stack([chunk[name] for name in names], axis=1))
    return orjson.dumps(table, option=orjson.OPT_SERIALIZE_NUMPY)[2:-2].decode().split("],[")


def _chunk_texts(chunks: Iterable[dict], spec: tuple, rows: int | None, parts=None):
    """The text of each non-empty chunk, in order: here, or in forked workers for a big grid."""
    import os

    chunks = (chunk for chunk in chunks if chunk["depth"].size)
    workers = min(os.cpu_count() or 1, 4)
    if rows is None or rows < PARALLEL_ROWS or workers < 2 or not hasattr(os, "fork"):
        return (_chunk_text(chunk, spec) for chunk in chunks)
    if parts is None:  # each worker runs the whole generator and spells its share
        parts = lambda k, n: (chunk for number, chunk in enumerate(chunks) if number % n == k)
    return _forked_texts(parts, spec, workers)


_DONE = (1 << 64) - 1  # a worker's last frame: it has spelled every chunk dealt to it


def _forked_texts(parts, spec: tuple, workers: int):
    """Chunk texts spelled by ``workers`` forked processes, chunk i by worker i % workers.

    Each worker computes its share (``parts(index, workers)``: its own chunks, or its own copy of
    the whole generator skipping the others'), spells it and sends each text down its own pipe as a
    length-prefixed frame; a full pipe blocks it, so memory stays at a chunk per worker. No
    threads, no shared queues: a consumer that stops (a closed stdout) kills the workers and
    nothing can hang. A worker that dies without its final frame is an error, never a short grid."""
    import os
    import signal
    import struct

    sys.stdout.flush()  # nothing buffered is inherited twice
    pipes, pids = [], []
    try:
        for index in range(workers):
            read_end, write_end = os.pipe()
            pid = os.fork()
            if pid == 0:  # the worker: never returns
                code = 1
                try:
                    os.close(read_end)
                    for pipe in pipes:
                        pipe.close()
                    with os.fdopen(write_end, "wb") as sink:
                        for chunk in parts(index, workers):
                            data = _chunk_text(chunk, spec).encode("utf-8", "surrogatepass")
                            sink.write(struct.pack("<Q", len(data)) + data)
                        sink.write(struct.pack("<Q", _DONE))
                    code = 0
                finally:
                    os._exit(code)  # no atexit handlers, no second flush of the parent's buffers
            os.close(write_end)
            pids.append(pid)
            pipes.append(os.fdopen(read_end, "rb"))
        number = 0
        while True:
            source = pipes[number % workers]
            head = source.read(8)
            if len(head) < 8:
                raise RuntimeError("a grid worker process stopped before its last chunk")
            (size,) = struct.unpack("<Q", head)
            if size == _DONE:  # no chunk `number`: every chunk has been written
                return
            data = source.read(size)
            if len(data) < size:
                raise RuntimeError("a grid worker process stopped in the middle of a chunk")
            yield data  # bytes: stream_grid writes them to the binary buffer when it can
            number += 1
    finally:
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:  # pragma: no cover - already gone
                pass
            os.waitpid(pid, 0)
        for pipe in pipes:
            pipe.close()

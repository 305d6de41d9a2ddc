"""`depthwidth fit`: fit your own depth/width rule from a sweep's results."""
from typing import Annotated, Optional

import typer

from ...core.errors import InputError
from ..options import Bootstrap, Field, Fmt, Format, GroupBy, GroupByOf, Seed, choices

FitForm = choices("FitForm", "levine", "power", "both")
Metric = choices("Metric", "last", "best")


def fit_report(results: Optional[str], group_by: GroupBy, form: str, bootstrap: int, seed: int, name: str, *,
               runs_dir: Optional[str] = None, sweep: Optional[str] = None, loss_column: str = "loss",
               id_column: str = "id", metric: str = "last"):
    """Read and fit results (shared by `fit` and `plot fit`): a results file (CSV, JSON, JSONL; joined
    to ``sweep`` by id when given) or a directory of Trainer runs; (report, runs)."""
    from ...loop.fit import fit_results
    from ...loop.results import load_runs

    if results is None and runs_dir is None:
        raise InputError("results", "(none)", "expected a RESULTS file (CSV, JSON or JSONL; - for standard input) or --runs DIR")
    if results is not None and runs_dir is not None:
        raise InputError("--runs", runs_dir, "give a RESULTS file or --runs DIR, not both")
    from ..progress import late_status

    with late_status(f"fit: reading and fitting {results or runs_dir}"):  # on a terminal, after a few seconds
        runs, source, sources = load_runs(results, runs_dir=runs_dir, sweep=sweep, group_by=group_by.value,
                                          loss_column=loss_column, id_column=id_column, metric=metric)
        return fit_results(runs, source, group_by.value, form, bootstrap, seed, name, sources=sources), runs


def command(
    results: Annotated[Optional[str], typer.Argument(help="The sweep's results with the loss filled in: CSV, JSON or JSONL "
                                                          "(depth, width, loss and a size), or a results file without shapes "
                                                          "(W&B export) with --sweep; - reads standard input.")] = None,
    runs_dir: Annotated[Optional[str], typer.Option("--runs", help="Instead of RESULTS: a directory with one folder per sweep "
                                                                   "row (named by its id) holding the Hugging Face Trainer's "
                                                                   "trainer_state.json; the sweep is DIR/manifest.json or --sweep.")] = None,
    sweep: Annotated[Optional[str], typer.Option("--sweep", help="The sweep (its JSON, JSONL or CSV, or an export's manifest.json) "
                                                                 "to join RESULTS or --runs to by id.")] = None,
    loss_column: Annotated[str, typer.Option("--loss-column", help="The loss column of RESULTS (e.g. eval/loss in a W&B export).")] = "loss",
    id_column: Annotated[str, typer.Option("--id-column", help="With --sweep: the column of RESULTS holding the run ids (e.g. Name).")] = "id",
    metric: Annotated[Metric, typer.Option("--metric", case_sensitive=False, help="With --runs: the last eval_loss of "
                                                                                  "log_history, or the best (lowest).")] = Metric.last,
    group_by: GroupByOf = GroupBy.params,
    form: Annotated[FitForm, typer.Option("--form", help="The law to fit across sizes: levine (ln d = a + b·L), "
                                          "power (d = k·N^alpha), or both (the better one goes in a saved rule).")] = FitForm.both,
    save: Annotated[Optional[str], typer.Option("--save", help="Write the fitted rule to this JSON file (for plan --rule-file).")] = None,
    name: Annotated[Optional[str], typer.Option("--name", help="The rule's name (default: the --save file's stem).")] = None,
    force: Annotated[bool, typer.Option("--force", help="Let --save replace an existing file.")] = False,
    bootstrap: Bootstrap = 1000,
    seed: Seed = 0,
    format: Fmt = Format.table,
    field: Field = None,
) -> None:
    """Fit your own depth/width rule from a sweep's results: optimal depth per size, then the law.

    Every size gets its optimal depth with an interval (the vertex of a parabola in ln depth, or the
    measured best where the runs cannot support one). A law the runs cannot support (fewer than 3
    sizes, or optima that do not move with size beyond their intervals) is not fitted: the output
    says why (exit 0), and --save is refused (exit 2).

    Example: depthwidth fit results.csv --save my-rule.json
    """
    from datetime import date

    from ... import __version__
    from ...output import check_field, emit
    from ...output.tables import fit_tables
    from ...advice.rules.file import rule_name, write_rule_file

    report, fitted_runs = fit_report(results, group_by, form.value, bootstrap, seed, rule_name(name, save), runs_dir=runs_dir,
                           sweep=sweep, loss_column=loss_column, id_column=id_column, metric=metric.value)
    records = report.records()
    check_field(records[0], field)  # a bad --field fails before the rule file is written
    if save is not None:
        from dataclasses import replace

        from ...loop.lossrefit import refit_penalty

        if report.law_note:
            raise InputError("--save", save, f"no law across sizes was fitted, so there is no rule to save: {report.law_note}")
        rule = report.rule(date.today().isoformat(), f"depthwidth {__version__}")
        write_rule_file(replace(rule, loss_model=refit_penalty(fitted_runs, group_by.value)), save, force)
    emit(records, format.value, field, lambda _: fit_tables(report))

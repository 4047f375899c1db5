"""``tooldiag run bfcl``: run a model through BFCL multi-turn into a resumable run."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from tooldiag.cli import options as opt

run_app = typer.Typer(help="Run a model through a benchmark into a resumable run directory.", no_args_is_help=True)


def print_summary(summary, console=None) -> None:
    """Per-category accuracy table of a finished (or resumed) run."""
    from rich.console import Console
    from rich.table import Table

    console = console or Console()
    table = Table(title=f"{summary.model} -> {summary.run_dir}", title_justify="left")
    table.add_column("category")
    table.add_column("passed", justify="right")
    table.add_column("graded", justify="right")
    table.add_column("Acc %", justify="right")
    table.add_column("errors", justify="right")
    accs = []
    for cat in summary.categories():
        entry = summary.counts[cat]
        acc = summary.accuracy(cat)
        if acc is not None:
            accs.append(acc)
        table.add_row(
            cat, str(entry["passed"]), str(entry["done"]), "-" if acc is None else f"{acc:.1f}", str(entry["error"])
        )
    console.print(table)
    if accs:
        console.print(f"overall Acc (unweighted mean of categories, as BFCL): {sum(accs) / len(accs):.2f}")
    workers = getattr(summary, "workers", 1)
    on = f" in {workers} worker processes" if workers > 1 else ""
    repeats = getattr(summary, "repeats", 1)
    units = f"(case, sample) units ({repeats} samples per case)" if repeats > 1 else "cases"
    if getattr(summary, "executor", "local") == "ray":
        on = f" on Ray ({workers} CPUs, {getattr(summary, 'endpoints', 1)} endpoints)"
    console.print(f"{summary.ran} {units} run, {summary.skipped} already finished, {summary.wall_s:.1f}s{on}")
    if getattr(summary, "executor", "local") == "ray":
        console.print(
            f"ray executor: {summary.unit_retries} case retries, {summary.worker_losses} worker losses", highlight=False
        )
    usage = getattr(summary, "usage", None)
    if usage is not None:  # the whole run, every session (docs/evidence.md, "Run summary")
        console.print("run summary: " + "\n             ".join(usage.lines()), highlight=False)
    if summary.inference_errors:
        console.print(
            f"[yellow]{len(summary.inference_errors)} cases were rejected by the server and graded "
            f"multi_turn:inference_error, as BFCL grades them. First: {summary.inference_errors[0]}[/yellow]"
        )
    if summary.errors:
        console.print(
            f"[yellow]{len(summary.errors)} cases ended in errors and are stored as error rows; "
            f"re-run the same command to retry them. First: {summary.errors[0]}[/yellow]"
        )


@run_app.command("bfcl")
def run_bfcl_command(
    model: Annotated[
        str,
        typer.Option(
            "--model",
            "-m",
            help=(
                "provider/model: openai/NAME, anthropic/NAME, litellm/ROUTE, "
                "or ref/oracle|overcall|halt (offline reference policies)."
            ),
        ),
    ],
    run_dir: Annotated[
        Path, typer.Option("--run-dir", "-o", help="Run directory (created; re-running the same command resumes it).")
    ],
    categories: Annotated[
        str, typer.Option("--categories", help="Comma-separated: base,long_context,miss_func,miss_param.")
    ] = "base,long_context,miss_func,miss_param",
    limit: Annotated[
        int | None, typer.Option("--limit", min=1, help="At most N cases per category (in BFCL's order).")
    ] = None,
    ids: Annotated[
        str | None,
        typer.Option("--ids", help="Comma-separated case ids, e.g. multi_turn_base_0,multi_turn_miss_func_3."),
    ] = None,
    probe: Annotated[
        str | None,
        typer.Option(
            "--probe",
            help="Inference-time probe: sri, sri:no_history, ..., cri-retry, cri-bypass (see docs/probes.md).",
        ),
    ] = None,
    base_url: Annotated[
        list[str] | None,
        typer.Option(
            "--base-url",
            help=(
                "Endpoint, e.g. http://127.0.0.1:8000/v1 for vLLM, SGLang, Ollama, llama.cpp (openai/* also "
                "reads OPENAI_BASE_URL). Repeat it to spread the cases round-robin over several endpoints "
                "(needs --executor ray)."
            ),
            rich_help_panel="Model",
        ),
    ] = None,
    api_key_env: opt.ApiKeyEnv = None,
    concurrency: opt.Concurrency = 8,
    temperature: opt.Temperature = 0.0,
    top_p: opt.TopP = None,
    max_tokens: opt.MaxTokens = None,
    seed: opt.Seed = None,
    stop: opt.Stop = None,
    extra_body: opt.ExtraBody = None,
    timeout: opt.Timeout = 120.0,
    no_cache: opt.NoCache = False,
    max_retries: opt.MaxRetries = 6,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress bar.")] = False,
    workers: Annotated[
        int | None,
        typer.Option(
            "--workers",
            min=1,
            help=(
                "Processes to shard the cases over (--concurrency is split between them; the parent "
                "alone writes the run). Default: one per core, at least 256 cases each. 1: one process."
            ),
        ),
    ] = None,
    max_response_bytes: opt.MaxResponseBytes = opt.DEFAULT_MAX_RESPONSE_BYTES,
    repeats: Annotated[
        int,
        typer.Option(
            "--repeats",
            min=1,
            help=(
                "Draws per case (samples 0..K-1, each stored and resumed on its own; a larger K on "
                "resume adds samples). Reports then give mean, spread, pass^k and flip rates."
            ),
        ),
    ] = 1,
    executor: Annotated[
        str,
        typer.Option(
            "--executor",
            help=(
                "local: this process (or --workers processes); ray: Ray tasks on a cluster, the driver "
                "alone writes the run (pip install 'tooldiag[ray]'; docs/distributed.md)."
            ),
        ),
    ] = "local",
    ray_address: Annotated[
        str | None,
        typer.Option(
            "--ray-address",
            help="With --executor ray: auto (the cluster `ray start` made here) or HOST:PORT. Default: a local Ray.",
        ),
    ] = None,
    endpoint_per_node: Annotated[
        str | None,
        typer.Option(
            "--endpoint-per-node",
            help=(
                "With --executor ray, instead of --base-url: a URL template each Ray task fills in on the node "
                "it runs on, so every node's cases go to that node's own server, e.g. 'http://{node_ip}:8000/v1' "
                "({node_ip}: the node's IP as Ray reports it; also {node_id}, and {label:KEY} for the node's "
                "`ray start --labels KEY=VALUE`)."
            ),
            rich_help_panel="Model",
        ),
    ] = None,
) -> None:
    """Run MODEL on BFCL multi-turn (FC mode, BFCL's loop and step cap) and grade every case
    with BFCL's own checker. Finished cases are committed one by one: re-run the same
    command after a crash to resume.

    Example: tooldiag run bfcl --model openai/Qwen3-8B --base-url http://127.0.0.1:8000/v1 --run-dir runs/qwen3

    All cores: tooldiag run bfcl --model ref/oracle --run-dir runs/oracle --workers 4 --concurrency 32

    Three draws per case: tooldiag run bfcl --model ref/coin --run-dir runs/coin --repeats 3 --seed 7

    A Ray cluster, two endpoints: tooldiag run bfcl --model openai/Qwen3-8B --executor ray --ray-address auto
    --base-url http://gpu1:8000/v1 --base-url http://gpu2:8000/v1 --concurrency 64 --run-dir runs/qwen3

    A vLLM server on every GPU node: tooldiag run bfcl --model openai/Qwen3-8B --executor ray --ray-address auto
    --endpoint-per-node 'http://{node_ip}:8000/v1' --concurrency 64 --run-dir runs/qwen3
    """
    from tooldiag.api import run_bfcl
    from tooldiag.cli.progress import run_progress

    generation = opt.build_generation(temperature, top_p, max_tokens, seed, stop, extra_body, timeout)
    urls = list(base_url or [])
    options = opt.build_model_options(
        urls[0] if urls else None, api_key_env, concurrency, no_cache, max_retries, max_response_bytes
    )
    with run_progress(f"bfcl {model}", enabled=not quiet) as progress:
        summary = run_bfcl(
            model,
            run_dir,
            categories=opt.split_list(categories),
            ids=opt.split_list(ids),
            limit=limit,
            generation=generation,
            options=options,
            probe=probe,
            progress=progress,
            workers=workers,
            repeats=repeats,
            executor=executor,
            ray_address=ray_address,
            base_urls=urls if len(urls) > 1 else None,
            endpoint_per_node=endpoint_per_node,
        )
    print_summary(summary)


def register(app: typer.Typer) -> None:
    app.add_typer(run_app, name="run", rich_help_panel="Run benchmarks")

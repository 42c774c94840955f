#!/usr/bin/env python3
"""Runs every query and fan-out of docs/FORMAT.md ("Reading it without vantage") and docs/SCALE.md
on a vantage Parquet v2 dataset made from a sample run, and checks that the partitioned credit
read back equals `vantage credit` on the whole log.

    python3 bench/v2_examples.py [VANTAGE_BINARY]     # default target/release/vantage, else target/debug/vantage

Needs polars, duckdb and pyarrow (and pyspark with a Java runtime for the Spark example; GNU
parallel for the shell example): they are installed into bench/.venv from PyPI on first use, as
bench/load.py does. Prints each result; exits non-zero when one disagrees.
"""

import glob
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
VENV = os.path.join(HERE, ".venv")
PACKAGES = ["polars", "duckdb", "pyarrow", "pandas<3", "pyspark"]


def ensure_venv():
    """Re-runs this script under bench/.venv with the packages installed."""
    python = os.path.join(VENV, "bin", "python")
    try:
        import duckdb, pandas, polars, pyarrow, pyspark  # noqa: F401, E401
        return
    except ImportError:
        pass
    if sys.prefix == VENV:
        return
    if not os.path.exists(python):
        subprocess.run([sys.executable, "-m", "venv", VENV], check=True)
    subprocess.run([python, "-m", "pip", "install", "-q", *PACKAGES], check=True)
    os.execv(python, [python, *sys.argv])


def vantage_binary():
    if len(sys.argv) > 1:
        return os.path.abspath(sys.argv[1])
    for profile in ["release", "debug"]:
        path = os.path.join(ROOT, "target", profile, "vantage")
        if os.path.exists(path):
            return path
    raise SystemExit("build vantage first: cargo build --release")


def main():
    ensure_venv()
    import duckdb
    import polars as pl

    vantage = vantage_binary()
    work = tempfile.mkdtemp(prefix="vantage-v2-examples-")
    run = os.path.join(work, "run")
    subprocess.run([vantage, "convert", os.path.join(ROOT, "sample_runs", "math_grpo_prm.jsonl"), run], check=True)
    failures = []

    # docs/FORMAT.md: polars.
    t = pl.scan_parquet(f"{run}/*/trajectories-*.parquet", hive_partitioning=True)
    means = t.group_by("train_step").agg(pl.col("reward").mean()).sort("train_step").collect()
    print("polars: mean reward per training step\n", means)
    s = pl.scan_parquet(f"{run}/*/steps-*.parquet", hive_partitioning=True)
    low = (s.filter(pl.col("score_prm") < 0.2)
           .join(t.filter(pl.col("success")).select("trajectory"), on="trajectory")
           .group_by("train_step").len().sort("train_step").collect())
    print("polars: steps with prm < 0.2 in successful rollouts\n", low)
    # A name missing from some files: polars inserts it.
    pl.scan_parquet(f"{run}/*/steps-*.parquet", hive_partitioning=True, missing_columns="insert").collect()

    # docs/FORMAT.md: DuckDB, the same two questions.
    con = duckdb.connect()
    d_means = con.sql(f"select train_step, avg(reward) from read_parquet('{run}/*/trajectories-*.parquet', "
                      f"hive_partitioning = true) group by 1 order by 1").fetchall()
    d_low = con.sql(f"""select s.train_step, count(*)
        from read_parquet('{run}/*/steps-*.parquet', hive_partitioning = true) s
        join read_parquet('{run}/*/trajectories-*.parquet', hive_partitioning = true) t using (trajectory)
        where s.score_prm < 0.2 and t.success group by 1 order by 1""").fetchall()
    print("duckdb:", d_means, d_low)
    if [(a, round(b, 5)) for a, b in d_means] != [(a, round(b, 5)) for a, b in means.rows()]:
        failures.append("DuckDB and polars disagree on the mean reward")
    if d_low != low.rows():
        failures.append("DuckDB and polars disagree on the low-prm steps")

    # The reference: credit on the whole log.
    whole = os.path.join(work, "whole.parquet")
    subprocess.run([vantage, "credit", os.path.join(ROOT, "sample_runs", "math_grpo_prm.jsonl"),
                    "--scheme", "grpo", "--out", whole], check=True)
    reference = pl.read_parquet(whole).select("trajectory", "step", "credit").sort("trajectory", "step")

    def check_credit(name, out):
        got = (pl.scan_parquet(f"{out}/*/credit.parquet", hive_partitioning=True)
               .select("trajectory", "step", "credit").sort("trajectory", "step").collect())
        same = got.equals(reference)
        print(f"{name}: {got.height} credit rows read back as one dataset; equal to the whole run: {same}")
        if not same:
            failures.append(f"{name}: partitioned credit differs from the whole run")

    # docs/SCALE.md: a shell loop under GNU parallel, one process per partition.
    if shutil.which("parallel"):
        out = os.path.join(work, "credit-parallel")
        subprocess.run(f"ls -d {run}/train_step=* | xargs -n1 basename | "
                       f"parallel -j2 {vantage} credit {run} --scheme grpo --partition {{}} --out {out}",
                       shell=True, check=True)
        check_credit("GNU parallel", out)
    else:
        print("GNU parallel: not installed (apt-get install parallel); skipped")

    # docs/SCALE.md: Spark, one task per partition through mapInPandas.
    if shutil.which("java"):
        from pyspark.sql import SparkSession
        os.environ["PYSPARK_PYTHON"] = sys.executable  # the workers need this venv's pandas and pyarrow
        spark = SparkSession.builder.master("local[2]").appName("vantage-credit").getOrCreate()
        spark.sparkContext.setLogLevel("ERROR")
        out = os.path.join(work, "credit-spark")
        partitions = [os.path.basename(p) for p in sorted(glob.glob(f"{run}/train_step=*"))]
        jobs = spark.createDataFrame([(p,) for p in partitions], "partition string")

        def credit(frames):
            import pandas as pd
            for frame in frames:
                codes = [subprocess.run([vantage, "credit", run, "--scheme", "grpo", "--partition", p,
                                         "--out", out]).returncode for p in frame["partition"]]
                yield pd.DataFrame({"partition": frame["partition"], "exit": codes})

        statuses = jobs.repartition(len(partitions)).mapInPandas(credit, "partition string, exit int").collect()
        print("spark:", sorted((r.partition, r.exit) for r in statuses))
        back = spark.read.parquet(out)
        print("spark: read back", back.count(), "rows, columns", back.columns)
        spark.stop()
        check_credit("Spark mapInPandas", out)
    else:
        print("Spark: no Java runtime; skipped")

    shutil.rmtree(work)
    if failures:
        raise SystemExit("\n".join(failures))


if __name__ == "__main__":
    main()

"""Building AgentJudgeBench records (paper 000 §3.1): the synthetic DAG generator with executable tools,
quality gates, difficulty rewrites and their meta-judge validation (docs/judgebench.md, "Generating records")."""

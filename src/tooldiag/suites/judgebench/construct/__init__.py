"""Building AgentJudgeBench records: generation, quality gates, difficulty rewrites and meta-judge validation."""

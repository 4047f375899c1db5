"""Building AgentJudgeBench records (paper 000 §3.1, App. C, App. N): generation with executable tools,
quality gates, difficulty rewrites and meta-judge validation."""

"""Record construction for AgentJudgeBench (paper 000 §3.1): generator, executable tools, quality gates."""

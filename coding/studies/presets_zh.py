"""Simplified Chinese texts of the preset codebooks (coding.studies.presets), for coders who read
Chinese first: questions, definitions and option labels by key and value
(coding.codebooks.translations). Keys and values stay English: codings store them."""

FAILURES = {
    "entropy_collapse": "熵坍缩",
    "length_bias": "长度偏差 / 回复长度漂移",
    "rollout_training_mismatch": "采样与训练不一致",
    "stale_rollouts": "过期的采样数据",
    "moe_instability": "MoE 不稳定与极端比率",
    "groups_without_signal": "无信号的组",
    "growing_kl": "KL 惩罚不断增大",
    "unexplained_collapse": "未说明原因的坍缩或发散",
    "none": "无",
}

COMPONENTS = {
    "objective": "目标函数或损失",
    "advantage": "优势函数或基线",
    "clipping": "裁剪或信任域",
    "importance_weighting": "重要性加权或离策略校正",
    "rollout_filtering": "影响梯度的采样或筛选",
    "reward_shaping": "与任务无关的奖励塑形",
    "kl_entropy": "KL 或熵正则化",
    "credit_assignment": "信用分配",
    "optimiser": "专为语言模型强化学习设计的优化器",
}


def _labels(labels):
    return {value: {"label": label} for value, label in labels.items()}


PAPER = {"questions": {
    "label": {
        "text": "这篇论文的主要贡献是什么？",
        "definition": "根据标题和摘要，选择论文的主要贡献。",
        "options": {
            "rl_method": {
                "label": "强化学习方法",
                "definition": "提出新的或改动的训练期强化学习组件：目标函数或损失、优势函数或基线、"
                              "裁剪或信任域、重要性加权或离策略校正、影响梯度的采样或筛选、"
                              "与任务无关的奖励塑形、KL 或熵正则化、信用分配、"
                              "专为语言模型强化学习设计的优化器。",
                "examples": "策略比率的新裁剪规则；不需要评论家的组基线。"},
            "rl_application": {
                "label": "强化学习应用",
                "definition": "把现有的强化学习用于某个任务或领域，包括领域奖励和验证器。",
                "examples": "用单元测试作为奖励、以 GRPO 训练代码生成。"},
            "analysis": {"label": "分析", "definition": "实证研究、复现或消融；没有新方法。"},
            "systems": {"label": "系统", "definition": "训练系统、异步流水线、吞吐量；目标函数不变。"},
            "offline_preference": {"label": "离线偏好", "definition": "DPO 一类的离线偏好优化。"},
            "distillation": {"label": "蒸馏", "definition": "主要目标是匹配教师模型。"},
            "out_of_scope": {"label": "不在范围内"},
        },
    },
    "scope": {
        "text": "这个方法的适用范围有多广？",
        "options": {
            "general": {"label": "通用", "definition": "适用于一般的语言模型强化学习训练。"},
            "embedded": {"label": "嵌入式", "definition": "只适用于某一个应用或领域。"},
            "other": {"label": "其他"},
        },
    },
    "component": {
        "text": "这个方法主要改动哪个组件？",
        "definition": "选一个主要组件。",
        "options": _labels(COMPONENTS),
    },
    "largest_policy_b": {
        "text": "训练的最大策略模型（十亿参数）",
        "definition": "论文用该方法训练的最大策略模型，或“未报告”。",
        "options": {"not_reported": {"label": "未报告"}},
    },
    "changes_existing_loss": {"text": "该方法是否改动现有损失中的系数、裁剪、掩码或权重？"},
    "code_released": {"text": "是否公开了代码？"},
    "industry_author": {"text": "是否有作者来自业界？"},
    "failure_addressed": {
        "text": "论文说它解决了哪些训练失败？",
        "definition": "列出的任何一种失败，或无。",
        "options": _labels(FAILURES),
    },
}}

THREAD = {"questions": {
    "thread_kind": {
        "text": "这是哪一类讨论串？",
        "options": _labels({"proposal_pr": "提案拉取请求", "request_issue": "需求议题",
                            "failure_report": "失败报告", "other": "其他"}),
    },
    "method_named": {"text": "讨论串提出或引用了哪个方法或 arXiv 编号？"},
    "outcome": {
        "text": "结果如何？",
        "options": _labels({"merged": "已合并", "open_discussion": "未关闭，讨论中",
                            "open_no_reply": "未关闭，维护者没有回复", "declined": "已拒绝",
                            "redirected": "转到别处", "lapsed": "已失效（因不活跃或过期而关闭）"}),
    },
    "stated_reasons": {
        "text": "维护者给出了哪些理由？",
        "options": _labels({"maintenance_burden": "维护负担", "placement": "放置位置",
                            "evidence": "证据", "already_covered": "已有覆盖", "demand": "需求"}),
    },
    "reply_by_other": {"text": "除提议者外，是否有其他人回复？"},
    "concerns": {
        "text": "审阅者提出了哪些顾虑？",
        "options": _labels({"design_interface": "设计或接口", "tests_docs": "测试或文档",
                            "other": "其他", "none": "无"}),
    },
    "failure_reported": {
        "text": "讨论串报告了哪种训练失败？",
        "options": _labels(FAILURES),
    },
}}

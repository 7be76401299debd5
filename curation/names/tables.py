"""The name tables the parser and the keys read: Chinese, Korean, East Asian
and Vietnamese family names, connectors, titles, degrees, generational
suffixes, orders, particles and collaboration markers (sources where each is
defined).
"""

from __future__ import annotations

import re

from nameparser.config import CONSTANTS as NAMEPARSER_CONSTANTS

from curation.names.text import fold

# Chinese compound (two-character) surnames still in use, from the compound entries
# of the "Hundred Family Surnames" (百家姓).
_CHINESE_COMPOUND_SURNAMES = frozenset(
    {
        "欧阳", "歐陽", "司马", "司馬", "诸葛", "諸葛", "上官", "东方", "東方",
        "皇甫", "尉迟", "尉遲", "公孙", "公孫", "慕容", "长孙", "長孫", "夏侯",
        "令狐", "宇文", "司徒", "澹台", "轩辕", "軒轅", "端木", "呼延", "南宫",
        "南宮", "西门", "西門", "独孤", "獨孤", "申屠", "闻人", "聞人",
    }
)  # fmt: skip
# Korean two-syllable surnames (the common ones; Statistics Korea census lists).
_KOREAN_COMPOUND_SURNAMES = frozenset(
    {"남궁", "황보", "제갈", "선우", "독고", "사공", "서문", "동방"}
)

# Frequent East Asian family names in romanisation (folded), compiled by hand from
# national frequency lists: Chinese pinyin (about the top 100), Wade-Giles and
# Cantonese spellings, Korean (common spellings), Japanese (about the top 50) and
# Vietnamese. Used only to propose a swapped block variant and to read a two-letter
# all-caps word ("LI", "WU") as a family name.
_CHINESE_SURNAMES = frozenset(
    """
    wang li zhang liu chen yang huang zhao wu zhou xu sun ma zhu hu guo he lin gao
    luo zheng liang xie song tang han feng deng cao peng zeng xiao tian dong pan
    yuan cai jiang yu du ye cheng wei su lu ding ren shen yao jin fan fang shi tan
    liao zou xiong qiu qin jia xue yan hou lei long duan hao kong shao mao chang wan
    gu lai wen qian dai niu mo hong bai meng kang yin xia qi fu zhong cui tao ji
    chan wong cheung leung lee ng chow tsai hsu chiang kuo hwang chu lau yeung
    chiu hsieh tseng chung kwok tsang lam yip fung ho tse mak lui kwan
    """.split()
)
_EAST_ASIAN_SURNAMES = _CHINESE_SURNAMES | frozenset(
    """
    kim park choi jung jeong kang cho yoon yun jang lim shin oh seo kwon ahn yoo
    moon bae baek nam noh ha jeon ko kwak hyun
    sato suzuki takahashi tanaka watanabe ito yamamoto nakamura kobayashi kato
    yoshida yamada sasaki yamaguchi matsumoto inoue kimura hayashi shimizu
    yamazaki mori abe ikeda hashimoto yamashita ishikawa nakajima maeda fujita
    ogawa goto okada hasegawa murakami kondo ishii saito sakamoto endo aoki fujii
    nishimura fukuda ota miura takeuchi nakano okamoto matsuda harada nakagawa
    nguyen tran pham hoang huynh phan vu vo dang bui ngo duong truong dinh
    """.split()
)
# Vietnamese family names before which "Van" is a middle name (văn), not a Dutch
# particle ("Anh Van Nguyen"): the most frequent Vietnamese family names.
_VIETNAMESE_SURNAMES = frozenset(
    """
    nguyen tran le pham hoang huynh phan vu vo dang bui do ho ngo duong ly truong
    dinh mai trinh lam luong ha cao ta doan chu quach thai
    """.split()
)

# Connectors inside a two-part surname ("Ortega y Gasset", "Puig i Cadafalch",
# "Sousa e Silva"): kept with the family name only when written in lower case.
_CONNECTORS = frozenset({"y", "i", "e"})

# Titles dropped from the front of a name. Our own short academic list: nameparser's
# 812 titles include "King", "Wing", "General" and "Count", which are given names.
_TITLES = frozenset(
    """
    dr prof professor mr mrs ms mx miss sir dame rev revd hon pd privdoz
    """.split()
)
# Generational suffixes (Chicago ch. 6 and 8). "V" and "I" are left out (they are
# initials far more often), and so are "Junior"/"Senior" (also surnames).
_GENERATIONAL = frozenset({"jr", "sr", "jnr", "snr", "ii", "iii", "iv"})
# Post-nominal degrees, recognised only as a whole comma part written with a
# lower-case letter ("PhD", "Ph.D.", "M.Sc.") or as "FRS", so that INSPIRE initials
# such as "Wang, J.D." or "Smith, M.D." are never taken for degrees.
_DEGREES = frozenset(
    "phd dphil dsc scd msc bsc mphil mba mdphd pharmd esq frs frse fras".split()
)
# Religious-order post-nominals printed after a name ("Guolei Sun SJ" in arXiv's
# own 2108.10257 test byline): Society of Jesus, Dominicans, Benedictines,
# Franciscans. Dropped when they trail a name of two or more words.
_ORDERS = frozenset({"sj", "op", "osb", "ofm"})

# Collaboration bylines: source: arXiv Authors lines ("LHCb collaboration: R. Aaij",
# "the PHOBOS Collaboration", "LIGO Scientific Collaboration and Virgo
# Collaboration") and the INSPIRE collaboration field.
_COLLAB_STRONG_RE = re.compile(
    r"\b(?:collaborations?|kollaboration|consortium|consortia)\b|\bcollab\.",
    re.IGNORECASE,
)
_COLLAB_WEAK_RE = re.compile(
    r"\b(?:team|group|working group|task force|network|survey)\s*$", re.IGNORECASE
)
_ACRONYM_RE = re.compile(r"\b(?:[A-Z]{2,}\w*|[A-Z]+\d+\w*)\b")


# Particles that belong to the family name ("First von Last": BibTeX; Chicago ch. 8),
# compared folded: "van", "de", "von", "da", "dos", "du", "ter", "ten", "le", "di",
# "del", "della" and their compounds ("van der", "de la"), extended with nameparser's
# prefix vocabulary (``"mac"`` for "Saunders Mac Lane", ``"san"``, ``"st"``, ...) less
# its one-letter apostrophe forms (which would swallow initials such as "D.") and a
# few words more common as given names in bylines.
_PARTICLES = frozenset(
    """
    van von vom der den des de del della delle dello degli dei di da das dos do du
    la las los le ter ten te zu zum zur af av al el bin ibn
    """.split()
) | frozenset(
    word
    for word in (fold(p).replace(" ", "") for p in NAMEPARSER_CONSTANTS.prefixes)
    if len(word) >= 2 and word not in {"bar", "bat", "bon", "vel", "ua", "heer"}
)

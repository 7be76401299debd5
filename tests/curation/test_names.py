"""Tests for curation.names: one small test per rule, real bylines read in place."""

from __future__ import annotations

import dataclasses
import functools
import importlib.resources
import json
import re
from pathlib import Path

import pytest
from django.conf import settings

from curation import names
from curation.names import (
    PersonName,
    block_key,
    block_key_variants,
    fold,
    given_name_similarity,
    given_names_compatible,
    initials,
    is_collaboration,
    latex_to_unicode,
    name_key,
    parse_name,
)

ABS_PAPERS = Path("arxiv", "abs_files", "ftp")
WANG_SIGNATURES = Path("and", "beard_inspire_wang", "wang_signatures.json")


def _data(relative: Path) -> Path:
    """Return a shared data path, read in place (never copied into the repo)."""
    path = Path(settings.WOVEPAPER_DATA_DIR) / relative
    assert path.exists(), f"shared data missing: {path}"
    return path


def _authors_field(relative: str) -> str:
    """Return the raw ``Authors:`` field of an arXiv .abs file, lines joined."""
    # A few old .abs files are Latin-1; the Authors line itself is ASCII LaTeX.
    text = _data(ABS_PAPERS / relative).read_text(encoding="utf-8", errors="replace")
    match = re.search(r"^Authors: (.*?)\n(?!  )", text, re.MULTILINE | re.DOTALL)
    assert match, f"no Authors field in {relative}"
    return " ".join(match.group(1).split())


def _byline(relative: str) -> list[str]:
    """Split an arXiv Authors field on commas and "and" outside brackets."""
    entries, depth, current = [], 0, ""
    field = _authors_field(relative)
    for char in field:
        depth += char == "("
        depth -= char == ")"
        if char == "," and depth == 0:
            entries.append(current)
            current = ""
        else:
            current += char
    entries.append(current)
    split = [p for e in entries for p in re.split(r"\s+and\s+", e) if p.strip()]
    return [p.strip() for p in split]


@functools.cache
def _wang_names() -> frozenset[str]:
    """The distinct INSPIRE ``author_name`` values of the beard Wang sample."""
    records = json.loads(_data(WANG_SIGNATURES).read_text(encoding="utf-8"))
    return frozenset(record["author_name"] for record in records)


# --- PersonName ------------------------------------------------------------------


def test_person_name_is_frozen() -> None:
    name = PersonName("Jean-Pierre", "Serre")
    with pytest.raises(dataclasses.FrozenInstanceError):
        name.family = "Other"  # type: ignore[misc]


def test_person_name_suffix_defaults_to_empty() -> None:
    assert PersonName("J.", "Smith").suffix == ""


# --- latex_to_unicode ------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        (r"Bal\'azs", "Balázs"),
        (r"N{\"o}llenburg", "Nöllenburg"),
        (r"Macr\`i", "Macrì"),
        (r"\v{c}", "č"),
        (r"{\o}", "ø"),
        (r"{\O}bro", "Øbro"),
        (r"\ss", "ß"),
        (r"Gro{\ss}e", "Große"),
        (r"Fran\c{c}ois", "François"),
        (r"Pucha{\l}a", "Puchała"),
        (r"H{\aa}stad", "Håstad"),
        (r"Juzeli\=unas", "Juzeliūnas"),
        (r"Erd\H{o}s", "Erdős"),
        (r"T\^{a}nia", "Tânia"),
        (r"Fr{\'e}d{\'e}ric", "Frédéric"),
        (r"\'{\i}", "í"),
    ],
)
def test_latex_to_unicode_decodes_accents(raw: str, expected: str) -> None:
    assert latex_to_unicode(raw) == expected


@pytest.mark.parametrize(
    "plain",
    [
        "Jean-Pierre Serre",
        "O'Brien",
        "C.-P. Yuan",
        "Ute Löw",
        "100% sure",
        "a $x$ b",
        "王小明",
        "Smith & Jones",
    ],
)
def test_latex_to_unicode_keeps_plain_text(plain: str) -> None:
    assert latex_to_unicode(plain) == plain


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("stray { brace", "stray brace"),
        ("stray } brace", "stray brace"),
        ("$", "$"),
        ("$$", "$$"),
        ("{{{", ""),
        ("\\", ""),
        ("\\'", ""),
        (r"Bal\'azs $\alpha", r"Balázs $\alpha"),
    ],
)
def test_latex_to_unicode_tolerates_stray_braces_and_dollars(
    raw: str, expected: str
) -> None:
    assert latex_to_unicode(raw) == expected


@pytest.mark.parametrize(
    "garbage",
    [
        "\\begin{foo",
        "\\end{x}",
        "}{",
        "\\verb|x",
        "\\url{http",
        "%%%",
        "\\\\\\",
        "^_&#",
        "\x00\x01",
        "\\v",
        "{\\",
        "$\\frac{1",
    ],
)
def test_latex_to_unicode_never_raises_on_garbage(garbage: str) -> None:
    assert isinstance(latex_to_unicode(garbage), str)


def test_latex_to_unicode_escapes_percent_before_decoding() -> None:
    assert latex_to_unicode(r"Fran\c{c}ois 50% off") == "François 50% off"


def test_latex_to_unicode_returns_nfc() -> None:
    assert latex_to_unicode("Mu\u0308ller") == "Müller"


@pytest.mark.parametrize(
    ("raw", "expected"),
    [("  Jean   Pierre\tSerre \n", "Jean Pierre Serre"), ("A.~Smith", "A. Smith")],
)
def test_latex_to_unicode_collapses_whitespace(raw: str, expected: str) -> None:
    assert latex_to_unicode(raw) == expected


def test_latex_to_unicode_empty_is_empty() -> None:
    assert latex_to_unicode("") == ""


@pytest.mark.parametrize(
    ("abs_file", "expected"),
    [
        ("arxiv/papers/0704/0704.0001.abs", "C. Balázs, E. L. Berger"),
        ("arxiv/papers/0806/0806.0920.abs", "Martin Nöllenburg"),
        ("arxiv/papers/1607/1607.08199.abs", "Emanuele Macrì"),
        ("arxiv/papers/1611/1611.08171.abs", "H. Nesse Tyssøy"),
        ("arxiv/papers/0704/0704.0062.abs", "Rastislav Šrámek"),
        ("arxiv/papers/0704/0704.0401.abs", "A. Lançon"),
        ("arxiv/papers/0704/0704.0049.abs", "Mikkel Øbro"),
        ("arxiv/papers/1702/1702.00249.abs", "Martin Ekerå and Johan Håstad"),
        ("arxiv/papers/0704/0704.0356.abs", "Pablo Cerdá-Durán"),
    ],
)
def test_latex_to_unicode_real_arxiv_bylines(abs_file: str, expected: str) -> None:
    assert expected in latex_to_unicode(_authors_field(abs_file))


# --- fold ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Müller", "muller"),
        ("Balázs", "balazs"),
        ("Łukasz", "lukasz"),
        ("Søren", "soren"),
        ("Große", "grosse"),
        ("NÖLLENBURG", "nollenburg"),
    ],
)
def test_fold_transliterates_to_lower_ascii(text: str, expected: str) -> None:
    assert fold(text) == expected


@pytest.mark.parametrize(
    "text", ["O'Brien", "O\u2019Brien", "O`Brien", "O\u02bcBrien", "OBrien"]
)
def test_fold_joins_apostrophes(text: str) -> None:
    assert fold(text) == "obrien"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Jean-Pierre", "jean pierre"),
        ("Jean Pierre", "jean pierre"),
        ("Jean\u2010Pierre", "jean pierre"),
        ("J.-P.", "j p"),
        ("Cerdá-Durán", "cerda duran"),
        ("  van  der   Velde ", "van der velde"),
    ],
)
def test_fold_turns_hyphens_and_punctuation_into_single_spaces(
    text: str, expected: str
) -> None:
    assert fold(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [("王小明", "wangxiaoming"), ("王", "wang"), ("小明", "xiaoming")],
)
def test_fold_romanises_chinese_characters(text: str, expected: str) -> None:
    assert fold(text) == expected


@pytest.mark.parametrize("text", ["", "   ", "-.'", "()"])
def test_fold_empty_when_nothing_alphanumeric(text: str) -> None:
    assert fold(text) == ""


def test_fold_keeps_digits() -> None:
    assert fold("D0 Collaboration") == "d0 collaboration"


# --- is_collaboration ------------------------------------------------------------


@pytest.mark.parametrize(
    "raw",
    [
        "ATLAS Collaboration",
        "The CMS and LHCb Collaborations",
        "Planck Collaboration",
        "LIGO Scientific Collaboration and Virgo Collaboration",
        "Event Horizon Telescope Consortium",
        "the PHOBOS Collaboration",
        "LHCb collaboration",
        "D0 Collaboration",
        "CMS Collab.",
        "for the Belle Collaboration",
        "(ATLAS Collaboration)",
        "H1 Kollaboration",
        "the Suzaku Eta Carinae team",
        "HPQCD Working Group",
    ],
)
def test_is_collaboration_recognises_collaborations(raw: str) -> None:
    assert is_collaboration(raw)


@pytest.mark.parametrize(
    "raw",
    [
        "Jean-Pierre Serre",
        "Ann Group",
        "John Grouper",
        "Mary Team",
        "Peter Teamson",
        "Wang, Zheng",
        "Collabora Smith",
        "Particle Data Group",
        "Jason Glyndwr Ulery (for the STAR Collaboration)",
        "Pablo M. Saz Parkinson (Milagro Collaboration)",
        "",
    ],
)
def test_is_collaboration_rejects_people(raw: str) -> None:
    assert not is_collaboration(raw)


@pytest.mark.parametrize(
    ("abs_file", "entry"),
    [
        ("arxiv/papers/0704/0704.0943.abs", "LIGO Scientific Collaboration"),
        ("arxiv/papers/0704/0704.0966.abs", "the PHOBOS Collaboration"),
        ("arxiv/papers/0704/0704.0346.abs", "the Suzaku Eta Carinae team"),
        ("arxiv/papers/0704/0704.0346.abs", "the Carinae D-1 team"),
    ],
)
def test_is_collaboration_real_arxiv_entries(abs_file: str, entry: str) -> None:
    byline = _byline(abs_file)
    assert entry in byline
    assert is_collaboration(entry)


@pytest.mark.parametrize(
    ("abs_file", "person"),
    [
        ("arxiv/papers/0704/0704.0966.abs", "B.Alver"),
        ("arxiv/papers/0704/0704.0346.abs", "Kenji Hamaguchi"),
        (
            "arxiv/papers/0704/0704.0852.abs",
            "D.Peressounko (for the PHENIX Collaboration)",
        ),
    ],
)
def test_is_collaboration_real_arxiv_people_are_not(abs_file: str, person: str) -> None:
    assert person in _byline(abs_file)
    assert not is_collaboration(person)


# --- parse_name ------------------------------------------------------------------


def _parsed(raw: str) -> tuple[str, str, str]:
    name = parse_name(raw)
    return name.given, name.family, name.suffix


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("Jean-Pierre Serre", ("Jean-Pierre", "Serre", "")),
        ("Paul Harvey", ("Paul", "Harvey", "")),
        ("Tracy L. Huard", ("Tracy L.", "Huard", "")),
    ],
)
def test_parse_name_first_last(raw: str, expected: tuple[str, str, str]) -> None:
    assert _parsed(raw) == expected


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("Serre, Jean-Pierre", ("Jean-Pierre", "Serre", "")),
        ("Wang, Zheng", ("Zheng", "Wang", "")),
        ("Wang, P.", ("P.", "Wang", "")),
        ("Wang,Yongqiang", ("Yongqiang", "Wang", "")),
        ("Wang, W.F.", ("W. F.", "Wang", "")),
        ("van der Velde, J.", ("J.", "van der Velde", "")),
    ],
)
def test_parse_name_last_comma_first(raw: str, expected: tuple[str, str, str]) -> None:
    assert _parsed(raw) == expected


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("Smith, John, Jr.", ("John", "Smith", "Jr.")),
        ("Smith, Jr., John", ("John", "Smith", "Jr.")),
        ("Robert W. Heath, Jr.", ("Robert W.", "Heath", "Jr.")),
        ("John Smith Jr.", ("John", "Smith", "Jr.")),
        ("James M. Valles Jr", ("James M.", "Valles", "Jr")),
        ("John Smith III", ("John", "Smith", "III")),
        ("Neal J. Evans II", ("Neal J.", "Evans", "II")),
        ("R.P. Kenny III", ("R. P.", "Kenny", "III")),
    ],
)
def test_parse_name_suffix_does_not_eat_the_surname(
    raw: str, expected: tuple[str, str, str]
) -> None:
    assert _parsed(raw) == expected


@pytest.mark.parametrize("raw", ["Dr. John Smith", "Dr John Smith", "Prof. John Smith"])
def test_parse_name_drops_titles(raw: str) -> None:
    assert _parsed(raw) == ("John", "Smith", "")


def test_parse_name_drops_stacked_titles() -> None:
    assert _parsed("Prof. Dr. Hans van der Berg") == ("Hans", "van der Berg", "")


def test_parse_name_drops_title_in_comma_form() -> None:
    assert _parsed("Smith, Dr. John") == ("John", "Smith", "")


@pytest.mark.parametrize("raw", ["John Smith, PhD", "John Smith, Ph.D."])
def test_parse_name_drops_degrees_after_comma(raw: str) -> None:
    assert _parsed(raw) == ("John", "Smith", "")


@pytest.mark.parametrize("raw", ["Wang, J.D.", "Smith, M.D.", "Wang, Ma"])
def test_parse_name_initials_after_comma_are_not_degrees(raw: str) -> None:
    family, given = raw.split(", ")
    assert parse_name(raw).family == family
    assert fold(parse_name(raw).given) == fold(given)


@pytest.mark.parametrize(
    ("raw", "given", "family"),
    [
        ("Ludwig van Beethoven", "Ludwig", "van Beethoven"),
        ("Johannes van der Waals", "Johannes", "van der Waals"),
        ("Pierre-Gilles de Gennes", "Pierre-Gilles", "de Gennes"),
        ("Maria de la Cruz", "Maria", "de la Cruz"),
        ("Georg M. von Hippel", "Georg M.", "von Hippel"),
        ("Ana da Silva", "Ana", "da Silva"),
        ("João dos Santos", "João", "dos Santos"),
        ("Pierre du Pont", "Pierre", "du Pont"),
        ("Jan ter Horst", "Jan", "ter Horst"),
        ("Henk ten Cate", "Henk", "ten Cate"),
        ("A. Le Fevre", "A.", "Le Fevre"),
        ("M. Di Toro", "M.", "Di Toro"),
        ("Dario Del Moro", "Dario", "Del Moro"),
        ("Anna della Volpe", "Anna", "della Volpe"),
        ("Luc Van Gool", "Luc", "Van Gool"),
        ("Saunders Mac Lane", "Saunders", "Mac Lane"),
        ("José Ortega y Gasset", "José", "Ortega y Gasset"),
    ],
)
def test_parse_name_keeps_particles_in_family(
    raw: str, given: str, family: str
) -> None:
    assert _parsed(raw) == (given, family, "")


@pytest.mark.parametrize(
    ("raw", "given", "family"),
    [
        ("Van Nguyen", "Van", "Nguyen"),
        ("Van Anh Tran", "Van Anh", "Tran"),
        ("Anh Van Nguyen", "Anh Van", "Nguyen"),
        ("Nguyen Van Khue", "Nguyen Van", "Khue"),
        ("Di Wu", "Di", "Wu"),
        ("Le Zhang", "Le", "Zhang"),
        ("Da Silva", "Da", "Silva"),
    ],
)
def test_parse_name_particle_word_as_given_name(
    raw: str, given: str, family: str
) -> None:
    assert _parsed(raw) == (given, family, "")


@pytest.mark.parametrize(
    ("raw", "family"),
    [("van Beethoven", "van Beethoven"), ("de la Cruz", "de la Cruz")],
)
def test_parse_name_lowercase_particle_start_is_all_family(
    raw: str, family: str
) -> None:
    assert _parsed(raw) == ("", family, "")


def test_parse_name_moves_trailing_particles_from_comma_given() -> None:
    assert _parsed("Beethoven, Ludwig van") == ("Ludwig", "van Beethoven", "")


@pytest.mark.parametrize(
    ("raw", "given"),
    [
        ("Jean-Pierre Serre", "Jean-Pierre"),
        ("J.-P. Serre", "J.-P."),
        ("J.P. Serre", "J. P."),
        ("J. P. Serre", "J. P."),
        ("Serre, J.-P.", "J.-P."),
    ],
)
def test_parse_name_hyphenated_and_initial_given(raw: str, given: str) -> None:
    assert _parsed(raw) == (given, "Serre", "")


@pytest.mark.parametrize("raw", ["Madonna", "  Madonna  ", "Madonna (1)"])
def test_parse_name_mononym_is_family(raw: str) -> None:
    assert _parsed(raw) == ("", "Madonna", "")


@pytest.mark.parametrize(
    ("raw", "given", "family"),
    [
        ("D.Peressounko", "D.", "Peressounko"),
        ("B.Alver", "B.", "Alver"),
        ("H.Kirk", "H.", "Kirk"),
        ("Yu.V.Ralchenko", "Yu. V.", "Ralchenko"),
        ("An.A.Ovchinnikov", "An. A.", "Ovchinnikov"),
        ("N.d'Ambrumenil", "N.", "d'Ambrumenil"),
        ("Fedor V.Prigara", "Fedor V.", "Prigara"),
        ("L.Delle Site", "L.", "Delle Site"),
    ],
)
def test_parse_name_initials_glued_to_family(raw: str, given: str, family: str) -> None:
    assert _parsed(raw) == (given, family, "")


def test_parse_name_iberian_comma_form_keeps_both_surnames() -> None:
    assert _parsed("García Márquez, José") == ("José", "García Márquez", "")


def test_parse_name_iberian_without_comma_prefers_last_word() -> None:
    assert _parsed("José García Márquez") == ("José García", "Márquez", "")


def test_parse_name_iberian_hyphenated_surname_is_one_word() -> None:
    assert _parsed("Pablo Cerdá-Durán") == ("Pablo", "Cerdá-Durán", "")


def test_parse_name_all_caps_family_marks_two_surnames() -> None:
    assert _parsed("José GARCÍA MÁRQUEZ") == ("José", "GARCÍA MÁRQUEZ", "")


@pytest.mark.parametrize(
    ("raw", "given", "family"),
    [
        ("王小明", "小明", "王"),
        ("李娜", "娜", "李"),
        ("欧阳娜娜", "娜娜", "欧阳"),
        ("诸葛亮", "亮", "诸葛"),
        ("王 小明", "小明", "王"),
    ],
)
def test_parse_name_chinese_native_script_family_first(
    raw: str, given: str, family: str
) -> None:
    assert _parsed(raw) == (given, family, "")


@pytest.mark.parametrize(
    ("raw", "given", "family"),
    [
        ("山田太郎", "太郎", "山田"),
        ("山田 太郎", "太郎", "山田"),
        ("山田\u3000太郎", "太郎", "山田"),
        ("田中さくら", "さくら", "田中"),
    ],
)
def test_parse_name_japanese_native_script_family_first(
    raw: str, given: str, family: str
) -> None:
    assert _parsed(raw) == (given, family, "")


@pytest.mark.parametrize(
    ("raw", "given", "family"),
    [("김민수", "민수", "김"), ("김 민수", "민수", "김"), ("남궁민수", "민수", "남궁")],
)
def test_parse_name_korean_native_script_family_first(
    raw: str, given: str, family: str
) -> None:
    assert _parsed(raw) == (given, family, "")


@pytest.mark.parametrize(
    ("raw", "given", "family"),
    [("ジョン・スミス", "ジョン", "スミス"), ("约翰·史密斯", "约翰", "史密斯")],
)
def test_parse_name_cjk_middle_dot_is_western_order(
    raw: str, given: str, family: str
) -> None:
    assert _parsed(raw) == (given, family, "")


def test_parse_name_mixed_script_keeps_latin_form() -> None:
    assert _parsed("Xiaoming Wang (王小明)") == ("Xiaoming", "Wang", "")
    assert _parsed("Xiaoming Wang 王小明") == ("Xiaoming", "Wang", "")


@pytest.mark.parametrize(
    ("raw", "given", "family"),
    [("Xiaoming Wang", "Xiaoming", "Wang"), ("Wang Xiaoming", "Wang", "Xiaoming")],
)
def test_parse_name_romanised_chinese_trusts_printed_order(
    raw: str, given: str, family: str
) -> None:
    assert _parsed(raw) == (given, family, "")


def test_parse_name_romanised_chinese_comma_is_unambiguous() -> None:
    assert _parsed("Wang, Xiaoming") == ("Xiaoming", "Wang", "")


@pytest.mark.parametrize(
    ("raw", "given", "family"),
    [("WANG Xiaoming", "Xiaoming", "WANG"), ("LI Wei", "Wei", "LI")],
)
def test_parse_name_leading_all_caps_is_family(
    raw: str, given: str, family: str
) -> None:
    assert _parsed(raw) == (given, family, "")


@pytest.mark.parametrize(
    ("raw", "given"),
    [("JP Serre", "JP"), ("J. SERRE", "J."), ("Jean-Pierre SERRE", "Jean-Pierre")],
)
def test_parse_name_initials_run_is_not_an_all_caps_family(
    raw: str, given: str
) -> None:
    assert parse_name(raw).given == given
    assert fold(parse_name(raw).family) == "serre"


@pytest.mark.parametrize(
    ("raw", "given", "family"),
    [
        ("Serre J. P.", "J. P.", "Serre"),
        ("Smith JP", "JP", "Smith"),
        ("Wang P", "P", "Wang"),
    ],
)
def test_parse_name_trailing_initials_mean_family_first(
    raw: str, given: str, family: str
) -> None:
    assert _parsed(raw) == (given, family, "")


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        (r"C. Bal\'azs", ("C.", "Balázs", "")),
        (r"Martin N\"ollenburg", ("Martin", "Nöllenburg", "")),
        (r"Emanuele Macr\`i", ("Emanuele", "Macrì", "")),
        (r"Rastislav \v{S}r\'amek", ("Rastislav", "Šrámek", "")),
        (r"Mikkel {\O}bro", ("Mikkel", "Øbro", "")),
        (r"N{\"o}llenburg, M.", ("M.", "Nöllenburg", "")),
    ],
)
def test_parse_name_decodes_latex(raw: str, expected: tuple[str, str, str]) -> None:
    assert _parsed(raw) == expected


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("Michael Kuhlen (1)", ("Michael", "Kuhlen", "")),
        ("Frédéric Klopp (LAGA)", ("Frédéric", "Klopp", "")),
        ("Leonid A. Mirny (1", ("Leonid A.", "Mirny", "")),
        ("A. Abulencia et al.", ("A.", "Abulencia", "")),
        ("and Tsvi Piran", ("Tsvi", "Piran", "")),
        ("J. Smith*", ("J.", "Smith", "")),
        ("J. Smith 2", ("J.", "Smith", "")),
    ],
)
def test_parse_name_strips_byline_noise(
    raw: str, expected: tuple[str, str, str]
) -> None:
    assert _parsed(raw) == expected


@pytest.mark.parametrize("raw", ["", "   ", "(1)", ",", "{}", "et al."])
def test_parse_name_empty_when_nothing_left(raw: str) -> None:
    assert _parsed(raw) == ("", "", "")


@pytest.mark.parametrize(
    "raw", ["\\begin{foo", "}{,,", "$$\\frac", ", , Jr.", "\x00", "Jr.", "III"]
)
def test_parse_name_never_raises_on_garbage(raw: str) -> None:
    assert isinstance(parse_name(raw), PersonName)


@pytest.mark.parametrize(
    ("abs_file", "raw", "given", "family", "suffix"),
    [
        ("arxiv/papers/0704/0704.0001.abs", r"C. Bal\'azs", "C.", "Balázs", ""),
        ("arxiv/papers/0704/0704.0001.abs", "C.-P. Yuan", "C.-P.", "Yuan", ""),
        (
            "arxiv/papers/0704/0704.0852.abs",
            "D.Peressounko (for the PHENIX Collaboration)",
            "D.",
            "Peressounko",
            "",
        ),
        ("arxiv/papers/0704/0704.0966.abs", "B.Alver", "B.", "Alver", ""),
        (
            "atom-ph/papers/9509/9509001.abs",
            "Yu.V.Ralchenko (Weizmann Institute of Science)",
            "Yu. V.",
            "Ralchenko",
            "",
        ),
        ("arxiv/papers/0704/0704.0030.abs", "N.d'Ambrumenil", "N.", "d'Ambrumenil", ""),
        (
            "arxiv/papers/0704/0704.0356.abs",
            r"Pablo Cerd\'a-Dur\'an",
            "Pablo",
            "Cerdá-Durán",
            "",
        ),
        (
            "arxiv/papers/0704/0704.0009.abs",
            "Neal J. Evans II",
            "Neal J.",
            "Evans",
            "II",
        ),
        (
            "arxiv/papers/0704/0704.0975.abs",
            "Charles L. Webber Jr.",
            "Charles L.",
            "Webber",
            "Jr.",
        ),
        (
            "arxiv/papers/0704/0704.0287.abs",
            "Pablo M. Saz Parkinson (Milagro Collaboration)",
            "Pablo M. Saz",
            "Parkinson",
            "",
        ),
        (
            "arxiv/papers/0704/0704.0512.abs",
            "Kelly C de Carvalho",
            "Kelly C",
            "de Carvalho",
            "",
        ),
        (
            "arxiv/papers/0704/0704.0532.abs",
            r"Guy Trambly De Laissardi\`ere (LPTM)",
            "Guy Trambly",
            "De Laissardière",
            "",
        ),
        (
            "arxiv/papers/0704/0704.0359.abs",
            "Nguyen Van Khue",
            "Nguyen Van",
            "Khue",
            "",
        ),
        ("arxiv/papers/2108/2108.10257.abs", "Luc Van Gool", "Luc", "Van Gool", ""),
        (
            "arxiv/papers/2108/2108.10257.abs",
            "Jiezhang Cao III",
            "Jiezhang",
            "Cao",
            "III",
        ),
        (
            "arxiv/papers/0806/0806.0920.abs",
            r"Martin N\"ollenburg",
            "Martin",
            "Nöllenburg",
            "",
        ),
    ],
)
def test_parse_name_real_arxiv_entries(
    abs_file: str, raw: str, given: str, family: str, suffix: str
) -> None:
    assert raw in _byline(abs_file)
    assert _parsed(raw) == (given, family, suffix)


def test_parse_name_real_inspire_wang_names_keep_comma_family() -> None:
    names = _wang_names()
    assert len(names) > 700
    wrong = [
        n
        for n in names
        if parse_name(n).family != n.split(",")[0].strip() or not parse_name(n).given
    ]
    assert wrong == []


@pytest.mark.parametrize(
    ("raw", "given"),
    [
        ("Wang, Shang-Yung", "Shang-Yung"),
        ("Wang, W.F.", "W. F."),
        ("Wang, J", "J"),
        ("Hwang, C.-S.", "C.-S."),
        ("Dewangan, Gulab.C.", "Gulab. C."),
        ("wang, G.M.", "G. M."),
    ],
)
def test_parse_name_real_inspire_given_forms(raw: str, given: str) -> None:
    assert raw in _wang_names()
    assert parse_name(raw).given == given


# --- initials --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        ("Jean-Pierre", "jp"),
        ("J.-P.", "jp"),
        ("J. P.", "jp"),
        ("J.P.", "jp"),
        ("Jean Pierre", "jp"),
        ("JP", "jp"),
        ("Yu. V.", "yv"),
        ("Xin-Nian", "xn"),
        ("Xinnian", "x"),
        ("Élodie", "e"),
        ("小明", "x"),
        ("", ""),
        ("1", ""),
    ],
)
def test_initials_reduce_given_names(given: str, expected: str) -> None:
    assert initials(given) == expected


def test_initials_all_caps_with_vowel_is_one_name() -> None:
    assert initials("ANA") == "a"


# --- block_key -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("given", "family", "expected"),
    [
        ("Jean-Pierre", "Serre", "serre j"),
        ("J.-P.", "Serre", "serre j"),
        ("J.", "van der Velde", "velde j"),
        ("J.", "Der Velde", "velde j"),
        ("J.", "Van Der Velde", "velde j"),
        ("", "Madonna", "madonna"),
        ("Zheng", "Wang", "wang z"),
        ("Élodie", "Müller", "muller e"),
        ("Pablo", "Cerdá-Durán", "cerdaduran p"),
        ("José", "García Márquez", "garciamarquez j"),
        ("Niall", "O'Brien", "obrien n"),
        ("小明", "王", "wang x"),
        ("Thanh", "Le", "le t"),
        ("", "", ""),
        ("Madonna", "", "madonna"),
    ],
)
def test_block_key_folds_family_and_first_initial(
    given: str, family: str, expected: str
) -> None:
    assert block_key(given, family) == expected


@pytest.mark.parametrize(
    ("a", "b"),
    [
        (("J.", "van der Velde"), ("Jan", "Der Velde")),
        (("Jean-Pierre", "Serre"), ("J.-P.", "Serre")),
        (("Ludwig", "van Beethoven"), ("L.", "Beethoven")),
        (("M.", "Nöllenburg"), ("Martin", "Nollenburg")),
        (("Xiaoming", "Wang"), ("小明", "王")),
    ],
)
def test_block_key_same_person_spellings_share_a_block(
    a: tuple[str, str], b: tuple[str, str]
) -> None:
    assert block_key(*a) == block_key(*b)


# --- block_key_variants ----------------------------------------------------------


@pytest.mark.parametrize(
    ("given", "family"),
    [("Jean-Pierre", "Serre"), ("J.", "van der Velde"), ("", "Madonna"), ("", "")],
)
def test_block_key_variants_primary_first(given: str, family: str) -> None:
    variants = block_key_variants(given, family)
    assert variants[0] == block_key(given, family)
    assert len(variants) == len(set(variants))


def test_block_key_variants_simple_name_has_only_primary() -> None:
    assert block_key_variants("Jean-Pierre", "Serre") == ["serre j"]


def test_block_key_variants_particles_kept_joined() -> None:
    assert "deluca g" in block_key_variants("Giuseppe", "De Luca")
    assert block_key("Giuseppe", "DeLuca") == "deluca g"


def test_block_key_variants_each_part_of_two_part_surname() -> None:
    assert block_key_variants("José", "García Márquez") == [
        "garciamarquez j",
        "garcia j",
        "marquez j",
    ]


def test_block_key_variants_each_part_of_hyphenated_surname() -> None:
    variants = block_key_variants("Pablo", "Cerdá-Durán")
    assert variants[:3] == ["cerdaduran p", "cerda p", "duran p"]


def test_block_key_variants_iberian_without_comma_reaches_comma_form() -> None:
    western = parse_name("José García Márquez")
    comma = parse_name("García Márquez, José")
    assert block_key(comma.given, comma.family) in block_key_variants(
        western.given, western.family
    )


@pytest.mark.parametrize(
    ("reversed_raw", "western_raw"),
    [
        ("Wang Xiaoming", "Xiaoming Wang"),
        ("Zhang Wei", "Wei Zhang"),
        ("Kim Minsu", "Minsu Kim"),
        ("Tanaka Hiroshi", "Hiroshi Tanaka"),
        ("Nguyen Van Khue", "Khue Van Nguyen"),
        ("Wang Shang-Yung", "Shang-Yung Wang"),
    ],
)
def test_block_key_variants_swapped_east_asian_order_meets(
    reversed_raw: str, western_raw: str
) -> None:
    reversed_name, western = parse_name(reversed_raw), parse_name(western_raw)
    assert block_key(western.given, western.family) in block_key_variants(
        reversed_name.given, reversed_name.family
    )


@pytest.mark.parametrize(("given", "family"), [("John", "Smith"), ("J.", "Wang")])
def test_block_key_variants_no_swap_for_non_east_asian_or_initials(
    given: str, family: str
) -> None:
    assert block_key_variants(given, family) == [block_key(given, family)]


# --- name_key --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("given", "family", "expected"),
    [
        ("Jean-Pierre", "Serre", "serre|jp"),
        ("J.-P.", "Serre", "serre|jp"),
        ("J. P.", "Serre", "serre|jp"),
        ("J.P.", "Serre", "serre|jp"),
        ("Jean Pierre", "Serre", "serre|jp"),
        ("J.", "van der Velde", "vandervelde|j"),
        ("Pablo", "Cerdá-Durán", "cerdaduran|p"),
        ("", "Madonna", "madonna|"),
        ("W.F.", "Wang", "wang|wf"),
        ("Niall", "O'Brien", "obrien|n"),
    ],
)
def test_name_key_family_bar_initials(given: str, family: str, expected: str) -> None:
    assert name_key(given, family) == expected


def test_name_key_real_inspire_variants_agree() -> None:
    variants = [
        "Hwang, C.S.",
        "Hwang, C.-S.",
        "Hwang, Ching-Shiang",
        "Hwang, Ching Shiang",
    ]
    assert set(variants) <= _wang_names()
    keys = {name_key(parse_name(v).given, parse_name(v).family) for v in variants}
    assert keys == {"hwang|cs"}


# --- given_names_compatible ------------------------------------------------------


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("J.", "John"),
        ("J. P.", "John Paul"),
        ("J.", "John Paul"),
        ("John", "John Paul"),
        ("Bill", "William"),
        ("Bob", "Robert"),
        ("Jon", "John"),
        ("J.-P.", "Jean-Pierre"),
        ("J.-P.", "Jean Pierre"),
        ("Jean-Pierre", "Jean Pierre"),
        ("JP", "Jean-Pierre"),
        ("Yu.", "Yuri"),
        ("Yu. V.", "Yuri Vladimirovich"),
        ("Xinnian", "Xin-Nian"),
        ("X.N.", "Xinnian"),
        ("José", "Jose"),
        ("小明", "Xiaoming"),
        ("", "John"),
        ("", ""),
    ],
)
def test_given_names_compatible_true(a: str, b: str) -> None:
    assert given_names_compatible(a, b)
    assert given_names_compatible(b, a)


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("John", "James"),
        ("J.", "K."),
        ("J. Q.", "John Paul"),
        ("Paul", "John Paul"),
        ("Yuri", "Yury"),
        ("Yu.", "Yan"),
        ("Mario", "Maria"),
    ],
)
def test_given_names_compatible_false(a: str, b: str) -> None:
    assert not given_names_compatible(a, b)
    assert not given_names_compatible(b, a)


@pytest.mark.parametrize(
    "variants",
    [
        ("Shang-Yung", "S.Y.", "S.-Y.", "S."),
        ("Ching-Shiang", "Ching Shiang", "C.S.", "C.-S.", "C."),
        ("Gulab Chand", "Gulab C.", "G.C.", "Gulab", "G."),
    ],
)
def test_given_names_compatible_real_inspire_variants(
    variants: tuple[str, ...],
) -> None:
    for a in variants:
        for b in variants:
            assert given_names_compatible(a, b), (a, b)


# --- given_name_similarity -------------------------------------------------------


@pytest.mark.parametrize(
    ("a", "b", "expected"),
    [
        ("John", "John", 1.0),
        ("Jean-Pierre", "Jean Pierre", 1.0),
        ("Bill", "William", 0.9025),
        ("J.", "John", 0.675),
        ("J. P.", "John Paul", 0.675),
        ("John", "John Paul", 0.675),
        ("J.", "John Paul", 0.5125),
        ("", "John", 0.3),
    ],
)
def test_given_name_similarity_documented_scale(
    a: str, b: str, expected: float
) -> None:
    assert given_name_similarity(a, b) == pytest.approx(expected)


def test_given_name_similarity_full_equality_beats_initial_match() -> None:
    assert given_name_similarity("John", "John") > given_name_similarity("J.", "John")


def test_given_name_similarity_nickname_between_equality_and_initial() -> None:
    nickname = given_name_similarity("Bill", "William")
    assert given_name_similarity("J.", "John") < nickname < 1.0


def test_given_name_similarity_empty_is_low_but_above_incompatible() -> None:
    empty = given_name_similarity("", "John")
    assert (
        given_name_similarity("John", "James")
        < empty
        < given_name_similarity("J.", "John")
    )


@pytest.mark.parametrize(
    ("a", "b"), [("John", "James"), ("Yuri", "Yury"), ("Paul", "John Paul")]
)
def test_given_name_similarity_incompatible_at_most_quarter(a: str, b: str) -> None:
    assert 0.0 <= given_name_similarity(a, b) <= 0.25


def test_given_name_similarity_spelling_variant_above_unrelated() -> None:
    assert given_name_similarity("Yuri", "Yury") > given_name_similarity(
        "John", "James"
    )


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("J.", "John"),
        ("Bill", "William"),
        ("Yu.", "Yuri"),
        ("John", "James"),
        ("", "x"),
    ],
)
def test_given_name_similarity_symmetric_and_in_unit_range(a: str, b: str) -> None:
    score = given_name_similarity(a, b)
    assert score == given_name_similarity(b, a)
    assert 0.0 <= score <= 1.0


# --- nicknames data --------------------------------------------------------------


def test_nicknames_table_ships_inside_the_package() -> None:
    assert importlib.resources.files("nicknames").joinpath("names.csv").is_file()


@pytest.mark.parametrize(
    ("raw", "given", "family"),
    [
        ("Guolei Sun SJ", "Guolei", "Sun"),  # arXiv 2108.10257's own test byline
        ("John Smith PhD", "John", "Smith"),
        ("Sun SJ", "SJ", "Sun"),  # two words: PubMed-style initials, kept
    ],
)
def test_parse_name_drops_trailing_post_nominals(raw, given, family):
    name = parse_name(raw)
    assert (name.given, name.family) == (given, family)


def test_name_caches_remember_short_names_only():
    """The LRU caches give the same answers, and a hostile long name is parsed
    every time instead of kept (the caches stay a few MB whatever arrives)."""
    names.parse_name.cache_clear()
    short = "Jean-Pierre van der Velde"
    first = names.parse_name(short)
    assert names.parse_name(short) is first
    assert names.parse_name.cache_info().hits == 1
    long = "A. " * 200 + "Velde"
    assert len(long) > names.NAME_CACHE_CHARS
    assert names.parse_name(long).family == "Velde"
    names.parse_name(long)
    info = names.parse_name.cache_info()
    assert (info.hits, info.currsize) == (1, 1)
    assert (
        names.block_key("J.", "Müller") == names.block_key("J.", "Müller") == "muller j"
    )


@pytest.mark.parametrize(
    ("display", "printed", "fits"),
    [
        ("Anna Pasquali", [("A.", "Pasquali")], True),
        ("Anna Pasquali", [("Adrian", "Del Maestro")], False),
        ("Adrian Del Maestro", [("A.", "Del Maestro")], True),
        ("Jan van der Velde", [("J.", "Der Velde")], True),  # a mis-split particle
        ("Jian Wang", [("Jie", "Wang")], False),  # pinyin syllables differ
        ("Jian Wang", [("Jie", "Wang"), ("J.", "Wang")], True),
        ("John Tate", [("Jean-Pierre", "Serre")], False),
        ("", [("Jean-Pierre", "Serre")], True),
        ("Jean-Pierre Serre", [], False),
    ],
)
def test_display_name_fits_a_name_the_papers_print(display, printed, fits):
    assert names.display_name_fits(display, printed) is fits


@pytest.mark.parametrize("printed", ["?", "!!!", "\u200b", "-"])
def test_a_name_that_folds_to_nothing_has_no_name_key(printed):
    parsed = names.parse_name(printed)
    assert names.name_key(parsed.given, parsed.family) == ""

"""Writes langdetect-cases.json: hand-written texts and what Python langdetect answers for each,
with DetectorFactory.seed = 0 (None where it raises LangDetectException).

langdetect is Mimino666/langdetect at commit 5071871742170034557c0e6ec8d6e410f3d9652f (its
source, as on GitHub, put on PYTHONPATH; it needs `six`); CPython 3.11.7:

    git clone https://github.com/Mimino666/langdetect /tmp/langdetect && git -C /tmp/langdetect checkout 5071871742170034557c0e6ec8d6e410f3d9652f
    python3 -m venv /tmp/v && /tmp/v/bin/pip install six
    PYTHONPATH=/tmp/langdetect /tmp/v/bin/python verifiers/ifeval/langdetect_cases.py > verifiers/ifeval/langdetect-cases.json
"""
import json
import sys
import unicodedata

import langdetect
from langdetect import DetectorFactory, detector_factory
from langdetect.lang_detect_exception import LangDetectException

DetectorFactory.seed = 0

WORDS = {
    "en": ["YES", "yes", "Hello", "thank you", "GOOD MORNING", "Wonderful", "OK"],
    "fr": ["Bonjour", "Merci beaucoup", "Oui", "Fromage"], "es": ["Hola", "Gracias", "Sí", "Mañana"],
    "de": ["Danke", "Guten Tag", "Straße", "Ja"], "it": ["Grazie", "Buongiorno", "Ciao"], "pt": ["Obrigado", "Olá", "Saudade"],
    "nl": ["Dank je", "Goedemorgen"], "sv": ["Tack", "Hej"], "da": ["Tak", "Hyggelig"], "no": ["Takk", "Hei"],
    "fi": ["Kiitos", "Hyvää huomenta"], "pl": ["Dziękuję", "Dzień dobry"], "cs": ["Děkuji", "Dobrý den"],
    "sk": ["Ďakujem"], "sl": ["Hvala lepa"], "hr": ["Hvala", "Dobar dan"], "hu": ["Köszönöm", "Jó napot"],
    "ro": ["Mulțumesc", "Bună ziua"], "tr": ["Teşekkürler", "Merhaba"], "vi": ["Cảm ơn", "Xin chào"],
    "id": ["Terima kasih", "Selamat pagi"], "sw": ["Asante", "Habari"], "so": ["Mahadsanid"], "tl": ["Salamat po"],
    "af": ["Dankie", "Goeie môre"], "sq": ["Faleminderit"], "cy": ["Diolch", "Bore da"], "et": ["Aitäh"],
    "lv": ["Paldies"], "lt": ["Ačiū"], "ca": ["Gràcies", "Bon dia"], "ru": ["Спасибо", "Привет"],
    "uk": ["Дякую", "Добрий день"], "bg": ["Благодаря"], "mk": ["Благодарам"], "el": ["Ευχαριστώ", "Καλημέρα"],
    "he": ["תודה", "שלום"], "ar": ["شكرا", "مرحبا"], "fa": ["مرسی", "سلام"], "ur": ["شکریہ"],
    "hi": ["धन्यवाद", "नमस्ते"], "mr": ["धन्यवाद मित्रा"], "ne": ["धन्यवाद छ"], "bn": ["ধন্যবাদ", "নমস্কার"],
    "pa": ["ਧੰਨਵਾਦ"], "gu": ["આભાર"], "ta": ["நன்றி", "வணக்கம்"], "te": ["ధన్యవాదాలు"], "kn": ["ಧನ್ಯವಾದ"],
    "ml": ["നന്ദി"], "th": ["ขอบคุณ", "สวัสดี"], "ko": ["감사합니다", "안녕하세요"], "ja": ["ありがとう", "こんにちは", "カタカナ"],
    "zh": ["谢谢", "你好", "謝謝", "中文"],
}
SENTENCES = {
    "en": "The weather today is lovely and I think we should go for a walk in the park.",
    "fr": "Le temps est magnifique aujourd'hui et nous devrions nous promener dans le parc.",
    "es": "El tiempo hoy es precioso y creo que deberíamos dar un paseo por el parque.",
    "de": "Das Wetter ist heute schön und ich denke, wir sollten im Park spazieren gehen.",
    "it": "Il tempo oggi è bellissimo e penso che dovremmo fare una passeggiata nel parco.",
    "pt": "O tempo hoje está lindo e acho que deveríamos dar um passeio no parque.",
    "nl": "Het weer is vandaag prachtig en ik denk dat we een wandeling in het park moeten maken.",
    "sv": "Vädret är underbart idag och jag tycker att vi borde ta en promenad i parken.",
    "fi": "Sää on tänään ihana ja mielestäni meidän pitäisi mennä kävelylle puistoon.",
    "pl": "Pogoda jest dziś piękna i myślę, że powinniśmy pójść na spacer do parku.",
    "tr": "Bugün hava çok güzel ve bence parkta yürüyüşe çıkmalıyız.",
    "vi": "Hôm nay thời tiết rất đẹp và tôi nghĩ chúng ta nên đi dạo trong công viên.",
    "id": "Cuaca hari ini sangat indah dan saya pikir kita harus berjalan-jalan di taman.",
    "sw": "Hali ya hewa leo ni nzuri na nadhani tunapaswa kwenda kutembea katika bustani.",
    "ru": "Сегодня прекрасная погода, и я думаю, что нам стоит прогуляться в парке.",
    "uk": "Сьогодні чудова погода, і я думаю, що нам варто прогулятися в парку.",
    "bg": "Времето днес е прекрасно и мисля, че трябва да се разходим в парка.",
    "el": "Ο καιρός σήμερα είναι υπέροχος και νομίζω ότι πρέπει να πάμε μια βόλτα στο πάρκο.",
    "ar": "الطقس اليوم جميل وأعتقد أنه يجب علينا أن نتمشى في الحديقة.",
    "fa": "هوا امروز عالی است و فکر می‌کنم باید در پارک قدم بزنیم.",
    "hi": "आज मौसम बहुत अच्छा है और मुझे लगता है कि हमें पार्क में टहलने जाना चाहिए।",
    "ne": "आज मौसम धेरै राम्रो छ र मलाई लाग्छ हामी पार्कमा घुम्न जानुपर्छ।",
    "mr": "आज हवामान खूप छान आहे आणि मला वाटते आपण उद्यानात फिरायला जावे.",
    "bn": "আজ আবহাওয়া খুব সুন্দর এবং আমার মনে হয় আমাদের পার্কে হাঁটতে যাওয়া উচিত।",
    "ta": "இன்று வானிலை மிகவும் அழகாக இருக்கிறது, நாம் பூங்காவில் நடக்க வேண்டும்.",
    "te": "ఈ రోజు వాతావరణం చాలా బాగుంది మరియు మనం పార్కులో నడవాలని నేను అనుకుంటున్నాను.",
    "th": "วันนี้อากาศดีมากและฉันคิดว่าเราควรไปเดินเล่นในสวนสาธารณะ",
    "ko": "오늘 날씨가 정말 좋아서 공원에 산책하러 가야 할 것 같아요.",
    "ja": "今日はとても良い天気なので、公園に散歩に行くべきだと思います。",
    "zh": "今天天气很好，我觉得我们应该去公园散步。",
    "ur": "آج موسم بہت اچھا ہے اور میرے خیال میں ہمیں پارک میں سیر کرنی چاہیے۔",
    "gu": "આજે હવામાન ખૂબ સરસ છે અને મને લાગે છે કે આપણે બગીચામાં ફરવા જવું જોઈએ.",
    "kn": "ಇಂದು ಹವಾಮಾನ ತುಂಬಾ ಚೆನ್ನಾಗಿದೆ ಮತ್ತು ನಾವು ಉದ್ಯಾನವನದಲ್ಲಿ ನಡೆಯಬೇಕು ಎಂದು ನಾನು ಭಾವಿಸುತ್ತೇನೆ.",
    "pa": "ਅੱਜ ਮੌਸਮ ਬਹੁਤ ਵਧੀਆ ਹੈ ਅਤੇ ਮੈਨੂੰ ਲੱਗਦਾ ਹੈ ਕਿ ਸਾਨੂੰ ਪਾਰਕ ਵਿੱਚ ਸੈਰ ਕਰਨੀ ਚਾਹੀਦੀ ਹੈ।",
}
NAMES = ["John", "Mary", "Peter", "Anna", "Hans", "Gwen", "Llewellyn", "Olga", "Pierre", "Yuki", "Ahmed", "Priya"]

texts = []
for lang, ws in WORDS.items():
    for w in ws:
        texts += [w, w.upper(), w.lower(), w + "!", f"{w}, {w}"]
for lang, s in SENTENCES.items():
    texts += [s, s.upper(), s.lower(), s.split(" ")[0], " ".join(s.split(" ")[:3]), s + " " + s, f"{s} https://example.com/x?y=1 {s}"]
for k in range(2, 7):
    for start in range(0, len(NAMES), 3):
        ns = (NAMES * 2)[start:start + k]
        texts += [", ".join(ns), ", ".join(n.upper() for n in ns), " and ".join(ns), "\n".join(f"- {n}" for n in ns)]
texts += [
    "", " ", "12345", "3.14159", "!!!", "???", "😀", "😀 hello", "hello 😀😀😀", "@#$%", "\u00a0", "-- --",
    "Hello 你好", "Привет hello", "Café au lait", "naïve façade", "THE QUICK BROWN FOX", "NASA and the USA",
    "I LOVE NEW YORK", "OK OK OK", "LOL", "BTW", "FYI: the meeting is at 3pm.", "Tiếng Việt",
    unicodedata.normalize("NFD", "Tiếng Việt rất hay và đẹp"), unicodedata.normalize("NFD", "Hôm nay thời tiết rất đẹp."),
    "mail me at john.smith@example.com today", "https://example.com", "see http://a.b/c and www.example.org",
    "Şeker ve ţară", "Zeichen: ș ț ş ţ", "ی ي", "ヒラガナ ひらがな", "ㄅㄆㄇ", "한국어 English 日本語", "Ελληνικά and English",
    "Ω", "ß", "ÆØÅ", "æøå blåbærsyltetøy", "Ñandú", "A", "a", "I", "x y z", "abc def ghi", "QWERTY", "asdf jkl",
    "The end.", "Yes.", "No.", "Maybe?", "Sure thing!", "Absolutely not.", "OKAY", "HELLO", "HELLO WORLD",
    "GOODBYE", "THANK YOU VERY MUCH", "MY ANSWER IS YES.", "my answer is no.", "all lower case words here",
    "ALL UPPER CASE WORDS HERE", "Title Case Words Here", "lorem ipsum dolor sit amet", "Lorem Ipsum",
    "Da", "Nein", "Si", "Non", "Ja", "Nee", "Tak", "Nie", "Ano", "Igen", "Evet", "Ndiyo", "Haan", "Hai",
]
seen = set()
uniq = []
for t in texts:
    if t not in seen:
        seen.add(t)
        uniq.append(t)


def detect(t):
    try:
        return langdetect.detect(t)
    except LangDetectException:
        return None


cases = [[t, detect(t)] for t in uniq]
out = {
    "langdetect": "Mimino666/langdetect 5071871742170034557c0e6ec8d6e410f3d9652f",
    "python": sys.version.split()[0],
    "seed": 0,
    "langlist": detector_factory._factory.langlist,
    "cases": cases,
}
sys.stdout.write(json.dumps(out, ensure_ascii=False, indent=0) + "\n")

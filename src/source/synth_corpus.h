/*
 * synth_corpus.h - the English prose the synthetic generator speaks.
 * Private to synth.c.  Sentences of varied length, with the punctuation,
 * numbers, quotes and brackets that real answers carry, so every chunking
 * policy has something to decide.  Written for ttsbuf.
 */
#ifndef TTSBUF_SYNTH_CORPUS_H
#define TTSBUF_SYNTH_CORPUS_H

static const char *const tb_corpus[] = {
    "Sure, I can help with that.",
    "Your appointment is confirmed for Tuesday at 3:30 in the afternoon.",
    "The short answer is yes.",
    "Before we start, could you tell me which account this is about?",
    "I checked the order history, and the package left the warehouse yesterday evening.",
    "It should arrive within two to three business days.",
    "If it does not, call us back and we will send a replacement at no cost.",
    "Here is how it works: the model streams text, and the voice reads it aloud as it arrives.",
    "When the text runs out before the voice does, the listener hears silence.",
    "That pause is what we want to avoid.",
    "Great question!",
    "There are three things to keep in mind.",
    "First, latency matters more than raw throughput for the opening words.",
    "Second, the rate of generation must stay ahead of the rate of speech.",
    "Third, a small buffer at the start hides most of the jitter.",
    "The total comes to 42.50 dollars, including tax.",
    "Would you like me to read that back to you?",
    "I'm sorry, I didn't quite catch that.",
    "Could you say it once more, a little slower?",
    "The forecast calls for light rain in the morning (about 60 percent) and clearing skies by "
    "noon.",
    "Temperatures will reach a high of 18 degrees.",
    "Okay.",
    "Let me look that up for you.",
    "According to the manual, the reset button is on the back panel, just below the power socket.",
    "Hold it down for ten seconds, then release it and wait for the light to turn green.",
    "\"Restart\" means the device keeps your settings; \"reset\" erases them.",
    "Most people find the first option is enough.",
    "You can also change this later in the settings menu.",
    "Is there anything else I can do for you today?",
    "Thanks for waiting; I have the results now.",
    "The flight departs at 7:15 and lands at 9:40, local time.",
    "Seat 14C is an aisle seat near the front of the cabin.",
    "Unfortunately, that option is not available on your current plan.",
    "However, you could upgrade for a small monthly fee, or keep the plan you have and add a "
    "one-time pass.",
    "In summary: restart first, reset only if that fails, and call us if neither works.",
    "The caf\u00e9 opens at 8 \u2014 a little earlier on weekends.",
    "That\u2019s everything on the list\u2026 for now.",
    "Have a wonderful day!",
};

#define TB_CORPUS_N (sizeof(tb_corpus) / sizeof(tb_corpus[0]))

#endif

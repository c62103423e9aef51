/**
 * Words people use for the 50 Quick, Draw! classes of cvae-quickdraw, beyond each class's own name
 * (the manifest label with `_` read as a space, e.g. `light bulb`). Plurals need no entry: the prompt
 * reader singularises every word with compromise; only joined spellings, regional words, irregular
 * plurals compromise gets wrong (`axes` → `axis`) and multi-word names are listed.
 *
 * - `strong`: as good as the class name (`aeroplane` is an airplane, `cup` draws a mug).
 * - `loose`: related or broader words (`lamp`, `computer`, `moonlight`) used only when the prompt
 *   names nothing stronger, so "a lamp next to an owl" draws the owl.
 *
 * Deliberately absent: `light` (an adjective as often as a lamp), `bug`/`insect` (ant or mosquito?),
 * `car` (no car class; a pickup truck would be a guess too far), `cat`, `dog`, `bird` (no such class).
 */
export interface DoodleSynonyms {
  strong?: readonly string[];
  loose?: readonly string[];
}

export const DOODLE_SYNONYMS: Readonly<Record<string, DoodleSynonyms>> = {
  airplane: {
    strong: ["plane", "aeroplane", "airplane", "jet", "jet plane", "jetliner", "airliner", "aircraft", "passenger plane"],
  },
  alarm_clock: { strong: ["alarmclock", "alarm clock", "clock", "alarm-clock"], loose: ["alarm", "timer"] },
  ambulance: { strong: ["ambulance van"], loose: ["paramedic", "emergency vehicle"] },
  angel: { strong: ["archangel", "cherub", "seraph"], loose: ["halo"] },
  ant: { strong: ["emmet"], loose: ["termite"] },
  anvil: { strong: ["blacksmith anvil"] },
  apple: { strong: ["crab apple"] },
  axe: { strong: ["ax", "axes", "hatchet", "tomahawk"] },
  pickup_truck: { strong: ["pickup", "pick up truck", "pickup truck", "truck", "lorry", "ute"], loose: ["van"] },
  laptop: { strong: ["laptop computer", "notebook computer", "macbook", "chromebook"], loose: ["computer", "notebook", "pc"] },
  leaf: { strong: ["leaves", "foliage"] },
  light_bulb: { strong: ["lightbulb", "bulb", "light globe", "incandescent bulb"], loose: ["lamp", "idea"] },
  lighter: { strong: ["cigarette lighter", "zippo", "lighter flame"] },
  lightning: { strong: ["lightning bolt", "thunderbolt", "lightening"], loose: ["thunderstorm", "thunder", "storm"] },
  lion: { strong: ["lioness", "lion cub"], loose: ["big cat"] },
  lipstick: { strong: ["lip stick", "lip gloss"] },
  lobster: { strong: ["crayfish", "crawfish"], loose: ["crab", "shrimp", "prawn"] },
  lollipop: { strong: ["lolly", "lollypop", "lolli pop"], loose: ["candy"] },
  mailbox: { strong: ["mail box", "letterbox", "letter box", "postbox", "post box", "mailboxes"] },
  megaphone: { strong: ["bullhorn", "loudhailer", "loud hailer", "loudspeaker"] },
  mermaid: { strong: ["merman", "mermaids"], loose: ["siren"] },
  microphone: { strong: ["mic", "microphones"] },
  microwave: { strong: ["microwave oven"] },
  monkey: { strong: ["chimp", "chimpanzee", "baboon", "macaque"], loose: ["ape", "gorilla", "orangutan"] },
  moon: { strong: ["full moon", "half moon", "crescent moon", "crescent"], loose: ["moonlight", "moonlit", "night sky"] },
  mosquito: { strong: ["mosquitos", "mozzie", "skeeter"], loose: ["gnat", "midge"] },
  motorbike: { strong: ["motorcycle", "motor bike", "motor cycle", "bike", "moped", "dirt bike"], loose: ["scooter", "bicycle"] },
  mountain: { strong: ["mountain range", "mountain peak"], loose: ["hill", "peak", "volcano", "alps"] },
  mouse: { strong: ["mice", "computer mouse"], loose: ["rat", "hamster"] },
  mouth: { strong: ["lips"], loose: ["smile", "teeth", "kiss"] },
  mug: { strong: ["cup", "coffee cup", "coffee mug", "teacup", "tea cup", "tankard"], loose: ["coffee", "tea"] },
  mushroom: { strong: ["toadstool", "fungus", "fungi"] },
  nail: { strong: ["nails", "tack"], loose: ["screw"] },
  necklace: { strong: ["pendant", "choker", "pearl necklace"], loose: ["chain", "pearls", "jewelry", "jewellery"] },
  ocean: { strong: ["sea", "seas", "ocean waves", "sea waves"], loose: ["wave", "waves", "beach", "water"] },
  octopus: { strong: ["octopi", "octopuses", "octopus"], loose: ["squid", "kraken"] },
  onion: { strong: ["shallot", "red onion"] },
  oven: { strong: ["stove", "range cooker", "cooker"], loose: ["kitchen"] },
  owl: { strong: ["owlet", "barn owl", "owls"] },
  panda: { strong: ["panda bear", "giant panda"], loose: ["bear"] },
  pants: { strong: ["trousers", "jeans", "slacks", "pant", "chinos"], loose: ["shorts", "leggings"] },
  paper_clip: { strong: ["paperclip", "paper-clip", "paper clip"], loose: ["clip"] },
  parachute: { strong: ["parachutist", "skydiver"], loose: ["paraglider", "skydiving"] },
  ice_cream: { strong: ["icecream", "ice-cream", "ice cream cone", "gelato", "sundae", "ice lolly"], loose: ["cone", "dessert"] },
  jacket: { strong: ["coat", "blazer", "parka", "anorak", "windbreaker"], loose: ["hoodie", "sweater"] },
  jail: { strong: ["prison", "gaol", "jail cell", "prison cell"], loose: ["cell", "bars", "cage"] },
  kangaroo: { strong: ["roo", "wallaby", "joey"] },
  key: { strong: ["door key", "house key", "car key"] },
  keyboard: { strong: ["computer keyboard", "keypad"], loose: ["typewriter"] },
  knife: { strong: ["knives", "dagger", "kitchen knife", "pocket knife"], loose: ["blade", "sword"] },
};

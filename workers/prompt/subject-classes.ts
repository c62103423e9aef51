/**
 * Subject classes: what kind of thing the subject is (a person, an animal, a landscape …). The
 * class adds a few seed words to the relevance query (a portrait of anyone benefits from what
 * prompts say about "portrait" and "face"), decides whether anatomy terms belong in the negative
 * prompt, and supplies the project's own curated detail terms used when the flavour list is not
 * installed. The noun lists are the project's; the NLP library's "Person"/"Actor" tags also mark
 * people it knows.
 */

export const SUBJECT_CLASSES = ["person", "animal", "creature", "landscape", "architecture", "interior", "vehicle", "food", "plant", "space", "object"] as const;
export type SubjectClass = (typeof SUBJECT_CLASSES)[number];

export interface SubjectClassInfo {
  /** Nouns (as term keys: singular, American spelling) that put a subject in this class. */
  nouns: string[];
  /** Words added to the relevance query, weighted below the user's own words. */
  seeds: string[];
  /** Bodies that can come out malformed: anatomy terms go into the negative prompt. */
  anatomy: boolean;
  /** Curated detail terms for when the flavour list is absent, by kind, best first. */
  fallback: { lighting: string[]; composition: string[]; quality: string[] };
}

export const SUBJECT_CLASS_INFO: Record<SubjectClass, SubjectClassInfo> = {
  person: {
    nouns: (
      "man woman girl boy child kid baby person people lady gentleman guy teenager teen adult elder grandmother grandfather " +
      "mother father daughter son sister brother wife husband bride groom king queen prince princess knight warrior soldier " +
      "samurai ninja wizard witch sorcerer sorceress mage priest monk nun pirate sailor captain cowboy detective doctor nurse " +
      "chef cook farmer fisherman hunter explorer astronaut pilot dancer ballerina singer musician guitarist drummer painter " +
      "artist scientist student teacher worker businessman businesswoman athlete runner boxer surfer skater model portrait face " +
      "character hero heroine villain assassin archer thief beggar merchant emperor empress pharaoh viking gladiator geisha " +
      "monarch traveler traveller wanderer hiker climber diver firefighter policeman keeper shepherd blacksmith alchemist " +
      "elf dwarf cyborg android vampire zombie mermaid fairy angel demon goddess god"
    ).split(" "),
    seeds: ["portrait", "face"],
    anatomy: true,
    fallback: {
      lighting: ["soft key light", "rim lighting", "natural window light"],
      composition: ["portrait composition", "shallow depth of field", "eye-level shot"],
      quality: ["highly detailed", "sharp focus", "high resolution"],
    },
  },
  animal: {
    nouns: (
      "cat kitten dog puppy fox wolf bear lion tiger leopard cheetah panther jaguar elephant giraffe zebra horse pony deer " +
      "rabbit bunny hare squirrel mouse rat hamster owl eagle hawk falcon raven crow bird parrot sparrow robin swan duck goose " +
      "chicken rooster penguin flamingo peacock hummingbird butterfly bee dragonfly spider ant beetle snake lizard turtle tortoise " +
      "frog toad fish shark whale dolphin octopus jellyfish crab seal otter beaver raccoon hedgehog koala kangaroo panda sloth " +
      "monkey gorilla ape camel llama alpaca cow bull ox sheep lamb goat pig boar moose elk bison buffalo hippo rhino crocodile " +
      "alligator bat badger lynx hyena meerkat lemur capybara corgi husky"
    ).split(" "),
    seeds: ["wildlife", "animal"],
    anatomy: true,
    fallback: {
      lighting: ["soft natural light", "backlit fur", "golden light"],
      composition: ["eye-level shot", "shallow depth of field", "full body shot"],
      quality: ["highly detailed", "sharp focus", "high resolution"],
    },
  },
  creature: {
    nouns: (
      "dragon unicorn griffin gryphon phoenix monster creature beast golem troll ogre goblin orc kraken hydra basilisk " +
      "chimera minotaur centaur pegasus yeti kaiju robot mech alien titan giant spirit ghost wraith dinosaur"
    ).split(" "),
    seeds: ["creature", "fantasy"],
    anatomy: true,
    fallback: {
      lighting: ["dramatic rim lighting", "volumetric light", "glowing highlights"],
      composition: ["dynamic pose", "low angle shot", "full body shot"],
      quality: ["highly detailed", "intricate details", "high resolution"],
    },
  },
  landscape: {
    nouns: (
      "landscape mountain hill valley forest wood woods jungle desert dune beach shore coast ocean sea lake river stream " +
      "waterfall canyon cliff island meadow field prairie savanna glacier volcano cave swamp marsh tundra fjord lagoon reef " +
      "sky cloud sunset sunrise storm aurora horizon wilderness countryside scenery vista park garden trail path road bay"
    ).split(" "),
    seeds: ["landscape", "scenery", "nature"],
    anatomy: false,
    fallback: {
      lighting: ["golden hour light", "soft atmospheric light", "dramatic sky"],
      composition: ["wide angle view", "sweeping panorama", "rule of thirds"],
      quality: ["highly detailed", "sharp focus", "8k"],
    },
  },
  architecture: {
    nouns: (
      "city town village street alley avenue building skyscraper tower castle palace temple church cathedral mosque shrine " +
      "pagoda house cottage cabin hut mansion manor villa lighthouse bridge ruin ruins fortress citadel skyline harbor port " +
      "market square plaza station factory windmill monastery library museum stadium arena metropolis megacity architecture rooftop roof"
    ).split(" "),
    seeds: ["architecture", "city", "street"],
    anatomy: false,
    fallback: {
      lighting: ["warm evening light", "soft ambient light", "atmospheric lighting"],
      composition: ["wide angle shot", "strong perspective", "establishing shot"],
      quality: ["highly detailed", "sharp focus", "architectural detail"],
    },
  },
  interior: {
    nouns: (
      "room bedroom kitchen bathroom hall hallway corridor office studio workshop classroom cafe coffeeshop restaurant nook " +
      "bar pub tavern inn shop store bookstore attic basement cellar interior lobby ballroom throne greenhouse laboratory lab " +
      "kitchenette parlor parlour study den"
    ).split(" "),
    seeds: ["interior", "room", "furniture"],
    anatomy: false,
    fallback: {
      lighting: ["warm interior lighting", "soft window light", "ambient light"],
      composition: ["wide interior shot", "symmetrical composition", "eye-level view"],
      quality: ["highly detailed", "sharp focus", "high resolution"],
    },
  },
  vehicle: {
    nouns: (
      "car truck bus van motorcycle motorbike bicycle bike train locomotive tram ship boat sailboat yacht submarine airplane " +
      "plane jet helicopter airship zeppelin spaceship spacecraft starship rocket tank tractor carriage wagon"
    ).split(" "),
    seeds: ["vehicle", "engine", "speed"],
    anatomy: false,
    fallback: {
      lighting: ["studio lighting", "reflective highlights", "dramatic lighting"],
      composition: ["three-quarter view", "low angle shot", "dynamic angle"],
      quality: ["highly detailed", "sharp focus", "high resolution"],
    },
  },
  food: {
    nouns: (
      "food cake pie bread pizza burger sandwich soup salad pasta noodle ramen sushi dumpling steak fruit apple orange " +
      "strawberry cherry banana grape lemon coffee tea latte cocktail wine beer drink dessert cookie cupcake donut chocolate " +
      "cheese breakfast dinner lunch meal feast candy ice cream croissant pancake taco curry"
    ).split(" "),
    seeds: ["food", "delicious", "appetizing"],
    anatomy: false,
    fallback: {
      lighting: ["soft natural light", "warm side light", "studio lighting"],
      composition: ["overhead shot", "close-up", "shallow depth of field"],
      quality: ["highly detailed", "appetizing", "sharp focus"],
    },
  },
  plant: {
    nouns: (
      "flower rose tulip lily orchid sunflower daisy lotus blossom cherry tree oak pine palm willow bamboo fern moss " +
      "mushroom cactus vine ivy leaf bouquet plant bonsai succulent garden grass wheat"
    ).split(" "),
    seeds: ["botanical", "petals", "leaves"],
    anatomy: false,
    fallback: {
      lighting: ["soft natural light", "dappled sunlight", "backlit petals"],
      composition: ["close-up", "shallow depth of field", "centered composition"],
      quality: ["highly detailed", "sharp focus", "intricate details"],
    },
  },
  space: {
    nouns: "planet galaxy nebula star moon sun comet asteroid universe cosmos space orbit eclipse constellation blackhole".split(" "),
    seeds: ["space", "cosmic", "stars"],
    anatomy: false,
    fallback: {
      lighting: ["glowing nebula light", "starlight", "rim light"],
      composition: ["wide cosmic vista", "centered composition", "sense of scale"],
      quality: ["highly detailed", "8k", "sharp focus"],
    },
  },
  object: {
    nouns: [],
    seeds: ["object", "detailed", "texture"],
    anatomy: false,
    fallback: {
      lighting: ["studio lighting", "soft shadows", "natural light"],
      composition: ["centered composition", "close-up", "clean background"],
      quality: ["highly detailed", "sharp focus", "high resolution"],
    },
  },
};

/** Surfaces by noun, for the subject features the relevance index may offer ("detailed fur"). */
const SURFACES: Record<string, string[]> = {
  fur: (
    "cat kitten dog puppy fox wolf bear lion tiger leopard cheetah panther jaguar rabbit bunny hare squirrel mouse rat hamster " +
    "deer horse pony monkey gorilla ape raccoon hedgehog koala panda sloth otter beaver badger lynx hyena meerkat lemur capybara " +
    "corgi husky llama alpaca sheep lamb goat bison buffalo moose elk cow bull ox yeti"
  ).split(" "),
  feathers: "owl eagle hawk falcon raven crow bird parrot sparrow robin swan duck goose chicken rooster penguin flamingo peacock hummingbird phoenix griffin gryphon".split(" "),
  scales: "dragon snake lizard crocodile alligator fish shark dinosaur basilisk hydra kaiju serpent".split(" "),
  petals: "flower rose tulip lily orchid sunflower daisy lotus blossom bouquet".split(" "),
  leaves: "tree oak pine palm willow bamboo fern vine ivy plant bonsai".split(" "),
  armor: "knight samurai warrior soldier gladiator viking robot mech golem cyborg android".split(" "),
};

/** Features worth detailing for this subject: people's faces, a fox's fur, a dragon's scales. */
export function subjectFeatures(head: string, subjectClass: SubjectClass): string[] {
  const features = Object.entries(SURFACES)
    .filter(([, nouns]) => nouns.includes(head))
    .map(([surface]) => surface);
  if (subjectClass === "person") features.push("face", "eyes");
  if (subjectClass === "architecture") features.push("architecture");
  if (subjectClass === "landscape") features.push("landscape");
  return features;
}

const CLASS_OF_NOUN = new Map<string, SubjectClass>();
for (const subjectClass of SUBJECT_CLASSES) {
  for (const noun of SUBJECT_CLASS_INFO[subjectClass].nouns) if (!CLASS_OF_NOUN.has(noun)) CLASS_OF_NOUN.set(noun, subjectClass);
}

/** The class a noun key belongs to, if the table knows it. */
export function classOfNoun(key: string): SubjectClass | undefined {
  return CLASS_OF_NOUN.get(key);
}

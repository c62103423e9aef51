/** The 50 classes of cvae-quickdraw in manifest order (checked against the mirror's manifest.json). */
export const QUICKDRAW_LABELS: readonly string[] = [
  "airplane", "alarm_clock", "ambulance", "angel", "ant", "anvil", "apple", "axe", "pickup_truck", "laptop",
  "leaf", "light_bulb", "lighter", "lightning", "lion", "lipstick", "lobster", "lollipop", "mailbox", "megaphone",
  "mermaid", "microphone", "microwave", "monkey", "moon", "mosquito", "motorbike", "mountain", "mouse", "mouth",
  "mug", "mushroom", "nail", "necklace", "ocean", "octopus", "onion", "oven", "owl", "panda",
  "pants", "paper_clip", "parachute", "ice_cream", "jacket", "jail", "kangaroo", "key", "keyboard", "knife",
];

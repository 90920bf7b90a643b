/**
 * Names of the synthetic country: localities, streets and businesses. They read like the
 * Romanian places of the default bounds (with their diacritics, so UTF-8 paths get exercised)
 * but are made up: a locality name is drawn from syllables and kept unique in the country.
 */
import type { Prng } from './prng.ts';

const HEADS = [
  'Bor', 'Cal', 'Dum', 'Fil', 'Gal', 'Hor', 'Iz', 'Lun', 'Mar', 'Neg', 'Ol', 'Pet', 'Răd', 'Sil', 'Tur',
  'Val', 'Zăr', 'Bran', 'Cră', 'Drag', 'Făg', 'Greb', 'Hum', 'Jil', 'Lup', 'Mih', 'Nic', 'Orl', 'Pop',
  'Rus', 'Sab', 'Ștef', 'Tăt', 'Ulm', 'Vlad', 'Corb', 'Băl', 'Cio', 'Dob', 'Glod', 'Măg', 'Plop', 'Sălc',
  'Tei', 'Vii', 'Brad', 'Stej', 'Frasin', 'Arin', 'Cerb',
] as const;
const MIDDLES = ['', '', '', 'o', 'u', 'ăl', 'im', 'ov', 'er', 'is', 'an', 'ăt'] as const;
const TAILS = [
  'ești', 'eni', 'ani', 'ița', 'oaia', 'ăuți', 'ova', 'iu', 'ad', 'ea', 'ina', 'eț', 'ari', 'uța', 'ăni',
  'ișoara', 'ești', 'eni',
] as const;
const QUALIFIERS = [' de Sus', ' de Jos', ' Noi', ' Vechi', ' Mari', ' Mici'] as const;

/** A new locality name not in `taken` (and adds it). */
export function localityName(rng: Prng, taken: Set<string>): string {
  for (let attempt = 0; ; attempt++) {
    let name = rng.pick(HEADS) + rng.pick(MIDDLES) + rng.pick(TAILS);
    if (attempt >= 8) name += rng.pick(QUALIFIERS);
    if (attempt >= 24) name += ` ${attempt}`;
    if (!taken.has(name)) {
      taken.add(name);
      return name;
    }
  }
}

const STREET_NAMES = [
  'Florilor', 'Mihai Eminescu', 'Unirii', 'Libertății', 'Republicii', 'Gării', 'Morii', 'Bisericii',
  'Școlii', 'Crinului', 'Trandafirilor', 'Teilor', 'Plopilor', 'Viilor', 'Păcii', 'Victoriei',
  'Independenței', 'Avram Iancu', 'Ștefan cel Mare', 'Mihai Viteazu', 'Tudor Vladimirescu', 'Horea',
  'Cloșca', 'Crișan', 'Nicolae Bălcescu', 'Ion Creangă', 'George Coșbuc', 'Lucian Blaga', 'Liviu Rebreanu',
  'Vasile Alecsandri', 'Mărășești', 'Primăverii', 'Zorilor', 'Salcâmilor', 'Castanilor', 'Stejarului',
  'Brazilor', 'Nucului', 'Cireșilor', 'Merilor', 'Lalelelor', 'Garoafelor', 'Narciselor', 'Macilor',
  'Fabricii', 'Industriei', 'Depoului', 'Pieței', 'Târgului', 'Podului', 'Izvorului', 'Fântânii', 'Râului',
  'Luncii', 'Câmpului', 'Dealului', 'Pădurii', 'Livezii', 'Grădinilor', 'Sportului', 'Tineretului',
  'Muncii', 'Progresului', 'Decebal', 'Traian', 'Dacilor', 'Romanilor', 'Ardealului', 'Moldovei',
  'Bucovinei', 'Dobrogei', 'Olteniei', 'Carpați', 'Dunării', 'Mureșului', 'Oltului', 'Siretului',
  'Prutului', 'Argeșului', 'Aviatorilor', 'Eroilor', 'Revoluției', 'Constituției', 'Spitalului',
  'Poștei', 'Cetății', 'Castelului', 'Mănăstirii', 'Viitorului', 'Soarelui', 'Luminii', 'Speranței',
  'Zambilelor', 'Bujorului', 'Iasomiei', 'Liliacului', 'Fagului', 'Mesteacănului', 'Arinului',
  'Sălciilor', 'Frasinului', 'Ulmului', 'Vișinilor', 'Caișilor', 'Prunilor', 'Gutuilor', 'Ciocârliei',
  'Privighetorii', 'Rândunelelor', 'Porumbeilor', 'Cocorilor', 'Vânătorilor', 'Pescarilor', 'Olarilor',
  'Fierarilor', 'Dogarilor', 'Morarilor', 'Zidarilor', 'Tâmplarilor', 'Croitorilor', 'Cojocarilor',
  'Agricultorilor', 'Ciobanilor', 'Plugarilor', 'Grigore Alexandrescu', 'Ion Luca Caragiale',
  'Octavian Goga', 'Mihail Kogălniceanu', 'Alexandru Ioan Cuza', 'Vasile Lupu', 'Petru Rareș',
  'Matei Basarab', 'Constantin Brâncoveanu', 'Gheorghe Doja', 'Andrei Mureșanu', 'Iuliu Maniu',
  'Nicolae Iorga', 'Emil Racoviță', 'Henri Coandă', 'Traian Vuia', 'Aurel Vlaicu', 'Ana Ipătescu',
  'Ecaterina Teodoroiu', 'Mircea cel Bătrân', 'Vlad Țepeș', 'Bogdan Vodă', 'Dragoș Vodă', 'Negru Vodă',
  'Basarabilor', 'Transilvaniei', 'Banatului', 'Maramureșului', 'Crișului', 'Someșului', 'Jiului',
  'Timișului', 'Bistriței', 'Ialomiței', 'Buzăului', 'Trotușului', 'Bârladului', 'Cernei', 'Nerei',
  'Muntenilor', 'Moților', 'Secuilor', 'Sașilor', 'Mioriței', 'Doinei', 'Horei', 'Baladei', 'Cântecului',
  'Cerbului', 'Ursului', 'Lupului', 'Vulturului', 'Șoimului', 'Zimbrului', 'Bradului', 'Molidului',
  'Tisei', 'Jnepenilor', 'Ienupărului', 'Murelor', 'Fragilor', 'Afinelor', 'Zmeurei', 'Strugurilor',
] as const;
const STREET_KINDS = ['Strada', 'Aleea', 'Intrarea', 'Calea', 'Bulevardul', 'Fundătura'] as const;
const STREET_COMBINATIONS = STREET_NAMES.length * STREET_KINDS.length;
const ORDINALS = ['', ' II', ' III', ' IV', ' V', ' VI', ' VII', ' VIII'] as const;

/**
 * Name of street `index` of a settlement, unique within it. The first streets are all
 * "Strada" with names in a settlement-specific order (a prime stride over the name list is a
 * bijection), then lanes, then avenues: villages get streets, big cities get every kind. Past
 * every combination a Roman ordinal keeps names apart, as large cities do.
 */
export function streetName(offset: number, index: number): string {
  const combination = index % STREET_COMBINATIONS;
  const name = STREET_NAMES[(offset + (combination % STREET_NAMES.length) * 7919) % STREET_NAMES.length];
  const kind = STREET_KINDS[Math.floor(combination / STREET_NAMES.length)];
  const round = Math.floor(index / STREET_COMBINATIONS);
  return `${kind} ${name}${round < ORDINALS.length ? ORDINALS[round] : ` ${round + 1}`}`;
}

const SURNAMES = [
  'Popescu', 'Ionescu', 'Popa', 'Pop', 'Radu', 'Dumitru', 'Stan', 'Stoica', 'Gheorghe', 'Matei', 'Ciobanu',
  'Rusu', 'Munteanu', 'Constantin', 'Mihai', 'Dinu', 'Tudor', 'Lazăr', 'Florea', 'Barbu', 'Ene', 'Moldovan',
  'Cristea', 'Toma', 'Sârbu', 'Nistor', 'Vasile', 'Oprea', 'Dobre', 'Ungureanu', 'Marin', 'Ilie', 'Neagu',
  'Bălan', 'Țurcanu', 'Șerban', 'Mocanu', 'Preda', 'Voicu', 'Coman', 'Roman', 'Lungu', 'Andrei', 'Costea',
  'Zamfir', 'Iordache', 'Căpraru', 'Păun', 'Grigore', 'Surdu',
] as const;
const TRADES = [
  'Construct', 'Impex', 'Trans', 'Agro', 'Com', 'Serv', 'Med', 'Consulting', 'Design', 'Prod', 'Invest',
  'Auto', 'Grup', 'Logistic', 'Market', 'Tech', 'Expert', 'Solar', 'Energy', 'Distribuție', 'Imobiliare',
  'Turism', 'Panificație', 'Instal', 'Farm', 'Mobila', 'Textil', 'Print', 'Soft', 'Dental',
] as const;
const FORMS = ['SRL', 'SRL', 'SRL', 'SRL', 'SRL', 'SRL', 'SRL', 'SRL', 'PFA', 'II', 'SA', 'SNC'] as const;

/** A registered business name: surname or locality-flavoured stem, trade, legal form. */
export function businessName(rng: Prng): string {
  const trade = rng.pick(TRADES);
  const form = rng.pick(FORMS);
  if (form === 'PFA' || form === 'II') return `${rng.pick(SURNAMES)} ${rng.pick(SURNAMES)} ${form}`;
  return rng.chance(0.3)
    ? `${rng.pick(SURNAMES)} & ${rng.pick(SURNAMES)} ${trade} ${form}`
    : `${rng.pick(SURNAMES)} ${trade} ${form}`;
}
